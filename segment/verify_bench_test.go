package segment_test

import (
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// BenchmarkVerifyIndexes checks a broker-written partition's .index and
// .timeindex against its .log (what dump --verify-index does per index
// file), each index on its own and both in one call:
//
//	go test ./segment -run '^$' -bench VerifyIndexes -benchmem
//
// Bytes per second are of the segments as stored.
func BenchmarkVerifyIndexes(b *testing.B) {
	pd := segtest.OpenLogDirPartition(b, 64<<20, segtest.LargeOptions{Seed: 13})
	type seg struct {
		lf   *segment.LogFile
		idx  segment.OffsetIndex
		tidx segment.TimeIndex
	}
	var segs []seg
	var size int64
	for _, s := range pd.Segments {
		lf := segtest.OpenLog(b, s.Log)
		idx, err := segment.ReadOffsetIndex(s.Index, s.BaseOffset)
		if err != nil {
			b.Fatal(err)
		}
		tidx, err := segment.ReadTimeIndex(s.TimeIndex, s.BaseOffset)
		if err != nil {
			b.Fatal(err)
		}
		segs = append(segs, seg{lf, idx, tidx})
		size += lf.Size
	}
	for _, mode := range []string{"index", "timeindex", "both"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for i := range segs {
					s := &segs[i]
					var idx *segment.OffsetIndex
					var tidx *segment.TimeIndex
					if mode != "timeindex" {
						idx = &s.idx
					}
					if mode != "index" {
						tidx = &s.tidx
					}
					probs, err := segment.VerifyIndexes(s.lf, idx, tidx)
					if err != nil || len(probs) > 0 {
						b.Fatalf("%v, %v", probs, err)
					}
				}
			}
		})
	}
}
