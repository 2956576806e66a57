package barrier

import (
	"errors"

	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
)

// mirrorTemplate writes, under a fresh root, the source a/mirror-0 (the
// barriertest fixture) and, unless fresh, a destination b/mirror-0 that
// mirrored it up to 11, failed over and wrote a batch of its own (so it
// must be aligned). It returns the root.
func mirrorTemplate(t *testing.T, fresh bool) string {
	t.Helper()
	root := t.TempDir()
	src := barriertest.WritePartition(t, filepath.Join(root, "a"), mirrorBatches(t), 400)
	if err := os.MkdirAll(filepath.Join(root, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if fresh {
		return root
	}
	dst := filepath.Join(root, "b", "mirror-0")
	mustMirror(t, src, dst, mirrorOpts(11))
	o := segment.AppenderOptions{SegmentBytes: 300, IndexIntervalBytes: 100}
	barriertest.AppendLocal(t, dst, [][]byte{Build(Spec{Timestamp: injectTs})}, o)
	barriertest.AppendLocal(t, dst, [][]byte{dataBatch(t, 0, 1, 7007, 0, 0, false, 0)}, o)
	return root
}

// partitionFiles is kafkaFiles, or nothing when dir does not exist.
func partitionFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return map[string]string{}
	}
	return kafkaFiles(t, dir)
}
