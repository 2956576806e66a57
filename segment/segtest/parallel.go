package segtest

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// DefaultParallel makes n (at least GOMAXPROCS) the number of parallel
// tests a package's test binary runs at once unless -test.parallel was
// given; call it from TestMain before m.Run. GOMAXPROCS, the default,
// suits tests that compute; tests that mostly wait on fsync (a crash loop
// at 30 % CPU on 2 cores) leave the cores idle with so few, and each of
// them works in directories of its own, so more at once changes nothing
// but the wall-clock time.
func DefaultParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}

// CopyExecutable copies the test binary src to dst where another user can
// run it (the go build cache is private): the tests that re-run their own
// binary under another uid, as root, to see what permissions do.
func CopyExecutable(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		return err
	}
	for _, d := range []string{filepath.Dir(dst), filepath.Dir(filepath.Dir(dst))} {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}
