package segment_test

import (
	"bytes"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// TestVerifyIndexesHalvesAsOneWalk: a large log is verified in two halves
// on two goroutines (verifyIndexes' halves); every problem must be the one
// the single walk reports, whatever is wrong with the entries, and a log
// the halves cannot answer (damage, a split entry that points inside a
// batch, offsets going back) falls back to the single walk. The log has a
// gap of 100 offsets where the halves meet, as a compacted log does.
func TestVerifyIndexesHalvesAsOneWalk(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	first, err := segtest.LargeSegment(&log, 5<<19, segtest.LargeOptions{Seed: 3, NoLarge: true})
	if err != nil {
		t.Fatal(err)
	}
	p0 := int64(log.Len())
	if _, err := segtest.LargeSegment(&log, 2<<20, segtest.LargeOptions{Seed: 4, NoLarge: true, StartOffset: first.NextOffset + 100}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix))
	testkit.WriteFile(t, path, log.Bytes())
	rawIdx, rawTidx, err := segment.RebuildIndexes(path, 0, 4096)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(log.Len())
	// The offset index: the rebuilt entries, none between the middle and
	// p0, and one at p0, so that the halves meet at the gap.
	var idx segment.OffsetIndex
	idx.Path = path + ".index"
	for _, e := range segment.ParseOffsetIndex(rawIdx, 0).Entries {
		if int64(e.Position) < size/2 || int64(e.Position) > p0 {
			idx.Entries = append(idx.Entries, e)
		}
	}
	lf := segtest.OpenLog(t, path)
	sc := lf.Scanner(segment.ScanOptions{Start: p0})
	if !sc.Next() {
		t.Fatal("no batch at p0")
	}
	atP0 := segment.IndexEntry{Offset: sc.Batch().LastOffset(), Position: int32(p0)}
	sc.Close()
	k := slices.IndexFunc(idx.Entries, func(e segment.IndexEntry) bool { return int64(e.Position) > p0 })
	idx.Entries = slices.Insert(idx.Entries, k, atP0)
	tidx := segment.ParseTimeIndex(rawTidx, 0)
	tidx.Path = path + ".timeindex"

	type mutation struct {
		name   string
		halves bool // the halves answer
		apply  func(idx *segment.OffsetIndex, tidx *segment.TimeIndex)
		// followerShaped: only kafka-dump-log's checks find a problem.
		followerShaped bool
	}
	n, m := len(idx.Entries), len(tidx.Entries)
	muts := []mutation{
		{"intact", true, func(*segment.OffsetIndex, *segment.TimeIndex) {}, false},
		{"positions off by one", true, func(x *segment.OffsetIndex, _ *segment.TimeIndex) {
			x.Entries[n/4].Position++
			x.Entries[3*n/4].Position++
		}, false},
		{"offsets wrong", true, func(x *segment.OffsetIndex, _ *segment.TimeIndex) {
			// Below the batch at their position: lookups read past them.
			x.Entries[1].Offset = x.Entries[0].Offset + 1
			x.Entries[k+2].Offset = x.Entries[k+1].Offset + 1
		}, false},
		{"entries of follower chunks", true, func(x *segment.OffsetIndex, _ *segment.TimeIndex) {
			// The last offset of a later batch, as a follower's append of a
			// chunk of batches writes it.
			x.Entries[1].Offset = x.Entries[2].Offset - 1
			x.Entries[k+2].Offset = x.Entries[k+3].Offset - 1
		}, true},
		{"follower entry past the end", true, func(x *segment.OffsetIndex, _ *segment.TimeIndex) {
			x.Entries[n-1].Offset = math.MaxInt32
		}, false},
		{"last entry past the end", true, func(x *segment.OffsetIndex, _ *segment.TimeIndex) {
			x.Entries = append(x.Entries, segment.IndexEntry{Offset: math.MaxInt32, Position: int32(size + 10)})
		}, false},
		{"time entries wrong", true, func(_ *segment.OffsetIndex, y *segment.TimeIndex) {
			y.Entries[m/5].Timestamp--
			y.Entries[4*m/5].Offset--
		}, false},
		{"time entries in the gap and past the end", true, func(_ *segment.OffsetIndex, y *segment.TimeIndex) {
			y.Entries = append(y.Entries, segment.TimeIndexEntry{Timestamp: math.MaxInt64 - 1, Offset: first.NextOffset + 5},
				segment.TimeIndexEntry{Timestamp: math.MaxInt64, Offset: math.MaxInt64 - 7})
		}, false},
		{"time entry at the first half's end", true, func(_ *segment.OffsetIndex, y *segment.TimeIndex) {
			y.Entries = append(y.Entries, segment.TimeIndexEntry{Timestamp: 1, Offset: first.NextOffset - 1})
		}, false},
		{"split entry inside a batch", false, func(x *segment.OffsetIndex, _ *segment.TimeIndex) {
			x.Entries[k].Position += 3
		}, false},
	}
	verify := func(halvesMin int64, idx *segment.OffsetIndex, tidx *segment.TimeIndex, dls bool) []segment.IndexProblem {
		t.Helper()
		old := *segment.HalvesMinBytes
		defer func() { *segment.HalvesMinBytes = old }()
		*segment.HalvesMinBytes = halvesMin
		probs, err := segment.VerifyIndexesWith(lf, idx, tidx, segment.VerifyOptions{DumpLogSegments: dls})
		if err != nil {
			t.Fatal(err)
		}
		return probs
	}
	for _, mu := range muts {
		for _, dls := range []bool{false, true} {
			x := idx
			x.Entries = slices.Clone(idx.Entries)
			y := tidx
			y.Entries = slices.Clone(tidx.Entries)
			mu.apply(&x, &y)
			want := verify(math.MaxInt64, &x, &y, dls)
			before := segment.HalvesUsed.Load()
			got := verify(0, &x, &y, dls)
			used := segment.HalvesUsed.Load() > before
			if used != mu.halves {
				t.Errorf("%s: halves answered: %v, want %v", mu.name, used, mu.halves)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (DumpLogSegments %v): the halves found\n%v\none walk\n%v", mu.name, dls, got, want)
			}
			switch {
			case mu.followerShaped && !dls && len(want) > 0:
				t.Errorf("%s: %v: a follower's entries send every lookup to the right place", mu.name, want)
			case mu.name != "intact" && (dls || !mu.followerShaped) && len(want) == 0:
				t.Errorf("%s (DumpLogSegments %v): no problem found: the mutation tests nothing", mu.name, dls)
			}
		}
	}
}
