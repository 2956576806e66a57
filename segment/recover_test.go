package segment_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// TestRecoverCorpus: over every class of the corruption corpus, Recover
// cuts the damaged .log exactly where the generator says broker recovery
// does (CorruptCase.Truncate, computed from the layout of the healthy
// files), with dump's finding kind, and keeps every byte where recovery
// keeps them; the batches it hands over are the ones before the cut.
func TestRecoverCorpus(t *testing.T) {
	c, err := segtest.NewCorpus(filepath.Join("..", "testdata", "partitions"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Cases {
		cc := &c.Cases[i]
		if !strings.HasSuffix(cc.Expect.File, segment.LogSuffix) {
			continue
		}
		t.Run(cc.Name, func(t *testing.T) {
			dir, err := c.Write(cc, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := segment.ParseFileName(cc.Expect.File)
			var kept int64
			end := int64(0)
			r, err := segment.Recover(filepath.Join(dir, cc.Expect.File), fi.Offset, segment.RecoverOptions{OnBatch: func(pos int64, b *decode.Batch) bool {
				if pos != end {
					t.Errorf("batch handed over at position %d, the one before ended at %d", pos, end)
				}
				end = pos + b.Size()
				kept++
				return true
			}})
			if cc.Expect.Kind == segtest.KindOffsetOverflow {
				var oe *segment.OffsetOverflowError
				if !errors.As(err, &oe) || !errors.Is(err, segment.ErrOffsetOverflow) {
					t.Fatalf("Recover: %v, want an *OffsetOverflowError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if kept != r.Batches || end != r.ValidBytes {
				t.Errorf("%d batches handed over ending at %d; Recovery says %d ending at %d", kept, end, r.Batches, r.ValidBytes)
			}
			damage := r.Cut != nil && r.Cut.Kind.Damage()
			switch {
			case cc.Truncate < 0 && damage:
				t.Fatalf("cut at %d (%s: %s), but recovery keeps every byte", r.Cut.Position, r.Cut.Kind, r.Cut.Message)
			case cc.Truncate < 0:
				return
			case r.Cut == nil:
				t.Fatalf("no cut, want one at %d", cc.Truncate)
			case r.Cut.Position != cc.Truncate || r.ValidBytes != cc.Truncate:
				t.Fatalf("cut at %d (%s), validBytes %d, want %d", r.Cut.Position, r.Cut.Kind, r.ValidBytes, cc.Truncate)
			case r.Cut.Bytes != r.Size-r.Cut.Position:
				t.Fatalf("cut of %d bytes from %d in %d", r.Cut.Bytes, r.Cut.Position, r.Size)
			case r.Cut.Kind.String() != cc.Expect.Kind && cc.Expect.Kind != segtest.KindCorruptRecords:
				// A record-level failure that breaks the CRC is cut as a
				// CRC mismatch; any other class names its cut.
				t.Fatalf("cut kind %s, dump reports %s", r.Cut.Kind, cc.Expect.Kind)
			case r.Cut.Kind != segment.CutZeroFilled && r.Cut.Err == nil:
				t.Fatalf("a %s cut without its CorruptError", r.Cut.Kind)
			}
		})
	}
}

// TestCutKindStrings: the kinds are the finding kinds every command
// reports.
func TestCutKindStrings(t *testing.T) {
	for k, want := range map[segment.CutKind]string{
		segment.CutNone: "none", segment.CutZeroFilled: segtest.KindZeroTail, segment.CutCRCMismatch: segtest.KindCRCMismatch,
		segment.CutTorn: segtest.KindTornTail, segment.CutCorruptBatch: segtest.KindCorruptBatch,
		segment.CutOffsetsBackwards: segtest.KindOffsetOrder, segment.CutInvalidMarker: "invalid-marker",
	} {
		if k.String() != want {
			t.Errorf("%d: %q, want %q", int(k), k, want)
		}
		if k.Damage() != (k != segment.CutNone && k != segment.CutZeroFilled) {
			t.Errorf("%s: Damage %v", k, k.Damage())
		}
	}
}

// TestRecoverProgressCountsTheSegment: Progress is told every byte of the
// segment once, in steps of about a MiB on a large one, whatever its tail.
func TestRecoverProgressCountsTheSegment(t *testing.T) {
	big, _, err := segtest.LargeSegmentFile(t.TempDir(), 5<<20, segtest.LargeOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join("..", "testdata", "broken", "torn-tail", "events-0", "00000000000000000000.log")
	for _, path := range []string{big, torn} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		calls := 0
		if _, err := segment.Recover(path, 0, segment.RecoverOptions{Progress: func(n int64) { sum += n; calls++ }}); err != nil {
			t.Fatal(err)
		}
		if sum != st.Size() {
			t.Errorf("%s: Progress told %d bytes of %d", path, sum, st.Size())
		}
		if path == big && calls < 4 {
			t.Errorf("%s: %d Progress calls for %d bytes: the line would not move within the segment", path, calls, st.Size())
		}
	}
}
