// Package logfiles is what the benchmark floors and the peer
// (testdata/bench/crcfloor, decodefloor, kmsgpeer) share to reach their
// input: the .log files under the paths on their command line, one after
// the other (Each), and a whole file memory-mapped read-only (Map,
// EachMapped), so that no read copy is in what they time.
package logfiles

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Find returns the .log files under each of paths (a file or a directory,
// walked in lexical order), in the order given.
func Find(paths []string) ([]string, error) {
	var files []string
	for _, a := range paths {
		err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".log") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// Map maps the file at path whole, read-only (MAP_SHARED: the page cache's
// pages, no copy). An empty file gives nil data. unmap releases the
// mapping and is never nil.
func Map(path string) (data []byte, unmap func(), err error) {
	unmap = func() {}
	f, err := os.Open(path)
	if err != nil {
		return nil, unmap, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil, unmap, err
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, unmap, err
	}
	return data, func() { syscall.Munmap(data) }, nil
}

// Each calls fn for each .log file under paths, in Find's order, and
// stops at the first error (Find's or fn's).
func Each(paths []string, fn func(path string) error) error {
	files, err := Find(paths)
	for i := 0; err == nil && i < len(files); i++ {
		err = fn(files[i])
	}
	return err
}

// EachMapped is Each with every file mapped whole (Map) while fn runs.
func EachMapped(paths []string, fn func(path string, data []byte) error) error {
	return Each(paths, func(path string) error {
		data, unmap, err := Map(path)
		if err != nil {
			return err
		}
		defer unmap()
		return fn(path, data)
	})
}
