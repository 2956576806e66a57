package mirror

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
)

// injectTs is the timestamp every test injection uses, so runs are
// byte-for-byte reproducible.
const injectTs = barriertest.InjectTs

func dataBatch(t testing.TB, base int64, n int, pid int64, epoch int16, seq int32, txn bool, ple int32) []byte {
	return barriertest.DataBatch(t, base, n, pid, epoch, seq, txn, ple)
}

func mirrorBatches(t testing.TB) [][]byte { return barriertest.MirrorBatches(t) }

func i32(v int32) *int32 { return &v }

// writeFixtureSeg writes batches as <tmp>/logs/mirror-0 with segments of
// segmentBytes.
func writeFixtureSeg(t testing.TB, batches [][]byte, segmentBytes int64) string {
	t.Helper()
	return barriertest.WritePartition(t, filepath.Join(t.TempDir(), "logs"), batches, segmentBytes)
}

// segmentedPair is the mirror fixture in segments of 400 bytes as a
// source, and a path for a destination not yet created in a log directory
// of its own.
func segmentedPair(t *testing.T) (src, dst string) {
	t.Helper()
	src = writeFixtureSeg(t, mirrorBatches(t), 400)
	dst = filepath.Join(t.TempDir(), "logs", "mirror-0")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	return src, dst
}

// mirrorPair is the barriertest fixture as a/mirror-0 and a path for
// b/mirror-0 in an existing log directory.
func mirrorPair(t *testing.T) (src, dst string) {
	t.Helper()
	root := t.TempDir()
	src = barriertest.WritePartition(t, filepath.Join(root, "a"), mirrorBatches(t), 400)
	return src, barriertest.PartitionDir(t, root, "b", "mirror", 0)
}
