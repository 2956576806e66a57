package barrier

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/barrier/barriertest"
)

const (
	ts0 = barriertest.TS0
	// injectTs is the timestamp every test injection uses, so runs are
	// byte-for-byte reproducible.
	injectTs = ts0 + 60_000
)

// Producers of the mirror fixture.
const (
	pidIdem  = barriertest.PIDIdempotent
	pidTxnA  = barriertest.PIDCommitted
	pidOpenB = barriertest.PIDOpenB
	pidReopC = barriertest.PIDReopened
	pidOpenE = barriertest.PIDOpenE
)

func tsOf(off int64) int64 { return barriertest.TsOf(off) }

func dataBatch(t testing.TB, base int64, n int, pid int64, epoch int16, seq int32, txn bool, ple int32) []byte {
	return barriertest.DataBatch(t, base, n, pid, epoch, seq, txn, ple)
}

func mirrorBatches(t testing.TB) [][]byte { return barriertest.MirrorBatches(t) }

// writeFixture writes batches as <tmp>/logs/mirror-0 with 400-byte
// segments (a few batches each).
func writeFixture(t testing.TB, batches [][]byte) string {
	return writeFixtureSeg(t, batches, 400)
}

func writeFixtureSeg(t testing.TB, batches [][]byte, segmentBytes int64) string {
	t.Helper()
	return barriertest.WritePartition(t, filepath.Join(t.TempDir(), "logs"), batches, segmentBytes)
}

// fileSnap is a file's content hash, size and mtime.
type fileSnap struct {
	sum   string
	size  int64
	mtime time.Time
	mode  fs.FileMode
}

// snapDir records every file under dir (and dir's own mtime under ".").
func snapDir(t testing.TB, dir string) map[string]fileSnap {
	t.Helper()
	out := map[string]fileSnap{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st, err := d.Info()
		if err != nil {
			return err
		}
		s := fileSnap{mtime: st.ModTime(), mode: st.Mode()}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			s.sum, s.size = hex.EncodeToString(h[:]), int64(len(b))
		}
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// contentOf drops mtimes and directories: what a file-level comparison of
// two partitions looks at.
func contentOf(s map[string]fileSnap) map[string]string {
	out := map[string]string{}
	for k, v := range s {
		if !v.mode.IsDir() {
			out[k] = v.sum
		}
	}
	return out
}

func diffSnaps(a, b map[string]fileSnap, withMtime bool) []string {
	var d []string
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok:
			d = append(d, "gone: "+k)
		case va.sum != vb.sum:
			d = append(d, "content: "+k)
		case withMtime && !va.mtime.Equal(vb.mtime):
			d = append(d, "mtime: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "new: "+k)
		}
	}
	slices.Sort(d)
	return d
}

func assertUnchanged(t testing.TB, before map[string]fileSnap, dir string) {
	t.Helper()
	if d := diffSnaps(before, snapDir(t, dir), true); len(d) > 0 {
		t.Fatalf("%s changed: %s", dir, strings.Join(d, ", "))
	}
}

// copyTree copies a directory tree (files and modes).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func i32(v int32) *int32 { return &v }

// sha256Hex hashes b.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
