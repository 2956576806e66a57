package edit

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/kseg/kseg/segment/segtest"
)

// TestBatchWalkWatchSeesWholeBatches: the staging read-back's batch walk
// tells its watcher every batch whole, at its position in the staged file,
// however the bytes are cut into chunks (a batch split across several
// reads, many batches in one read), and stops telling it at the first
// batch that fails its CRC.
func TestBatchWalkWatchSeesWholeBatches(t *testing.T) {
	var seg bytes.Buffer
	if _, err := segtest.LargeSegment(&seg, 1<<20, segtest.LargeOptions{Seed: 3}); err != nil {
		t.Fatal(err)
	}
	data := seg.Bytes()
	type seen struct {
		pos   int64
		batch []byte
	}
	var want []seen
	for pos := int64(0); pos < int64(len(data)); {
		n := int64(12) + int64(uint32(data[pos+8])<<24|uint32(data[pos+9])<<16|uint32(data[pos+10])<<8|uint32(data[pos+11]))
		want = append(want, seen{pos + 1000, data[pos : pos+n]})
		pos += n
	}
	if len(want) < 20 {
		t.Fatalf("only %d batches", len(want))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, maxChunk := range []int{1, 7, 61, 4096, 1 << 20} {
		var got []seen
		w := &batchWalk{pos: 0, shift: 1000, watch: func(pos int64, b []byte) { got = append(got, seen{pos, bytes.Clone(b)}) }}
		for rest := data; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(maxChunk))
			chunk := bytes.Clone(rest[:k])
			if err := w.write(chunk); err != nil {
				t.Fatalf("chunks of up to %d: %v", maxChunk, err)
			}
			clear(chunk) // the walk must not keep the chunk
			rest = rest[k:]
		}
		if err := w.finish(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("chunks of up to %d: %d batches seen, want %d", maxChunk, len(got), len(want))
		}
		for i := range want {
			if got[i].pos != want[i].pos || !bytes.Equal(got[i].batch, want[i].batch) {
				t.Fatalf("chunks of up to %d: batch %d seen at %d (%d bytes), want at %d (%d bytes)", maxChunk, i, got[i].pos, len(got[i].batch), want[i].pos, len(want[i].batch))
			}
		}
	}
	// A batch that fails its CRC is not told.
	bad := bytes.Clone(data)
	third := want[2].pos - 1000
	bad[third+int64(len(want[2].batch))-1] ^= 0xff
	var n int
	w := &batchWalk{watch: func(int64, []byte) { n++ }}
	if err := w.write(bad); err == nil {
		t.Fatal("a corrupt batch passed")
	}
	if n != 2 {
		t.Fatalf("%d batches told before the corrupt one, want 2", n)
	}
}
