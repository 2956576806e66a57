package digest_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/digest/digesttest"
)

// busyDigest writes a digest of n batches of a busy log (digesttest) to
// w and returns the log's bytes.
func busyDigest(w io.Writer, size, n int, h digest.Hash) (int64, error) {
	return digesttest.Write(w, digesttest.Options{BatchSize: size, Batches: int64(n), Hash: h})
}

// TestDigestSize: the digest of a busy log costs at most 60 bytes per
// batch whatever the batches' size, and 1 % of the log at 16 KiB batches
// (docs/performance.md states the figures BenchmarkDigestSize prints).
// The digests read back.
func TestDigestSize(t *testing.T) {
	t.Parallel()
	for _, size := range []int{100, 1 << 10, 16 << 10, 1 << 20} {
		n := 20000
		if size >= 1<<20 {
			n = 2000
		}
		var buf bytes.Buffer
		logBytes, err := busyDigest(&buf, size, n, digest.XXH3)
		if err != nil {
			t.Fatal(err)
		}
		per := float64(buf.Len()) / float64(n)
		if per > 60 {
			t.Errorf("%d-byte batches: %.1f digest bytes per batch, want at most 60", size, per)
		}
		if size == 16<<10 && float64(buf.Len()) > 0.01*float64(logBytes) {
			t.Errorf("16 KiB batches: the digest is %.2f %% of the log, want at most 1 %%", 100*float64(buf.Len())/float64(logBytes))
		}
		if err := readBack(buf.Bytes()); err != nil {
			t.Fatalf("%d-byte batches: %v", size, err)
		}
	}
}

// BenchmarkDigestSize reports the digest's bytes per batch and its share
// of the log for busy logs of batches of each size, with each hash.
func BenchmarkDigestSize(b *testing.B) {
	for _, h := range []digest.Hash{digest.XXH3, digest.SHA256} {
		for _, size := range []int{100, 1 << 10, 16 << 10, 256 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/%d", h, size), func(b *testing.B) {
				n := min(100000, max(2000, (256<<20)/size))
				var per, share float64
				for b.Loop() {
					var cw digesttest.CountWriter
					logBytes, err := busyDigest(&cw, size, n, h)
					if err != nil {
						b.Fatal(err)
					}
					per, share = float64(cw.N)/float64(n), 100*float64(cw.N)/float64(logBytes)
				}
				b.ReportMetric(per, "bytes/batch")
				b.ReportMetric(share, "%-of-log")
			})
		}
	}
}

// readBack opens a digest and reads its every batch.
func readBack(b []byte) error {
	d, err := digest.OpenReaderAt(bytes.NewReader(b), int64(len(b)), "busy.digest")
	if err != nil {
		return err
	}
	for i := 0; i < d.Segments(); i++ {
		sc := d.Scan(i)
		for sc.Next() {
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	return nil
}
