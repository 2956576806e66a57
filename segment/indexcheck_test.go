package segment

import (
	"strings"
	"testing"
)

// TestIndexCheckFileVerdicts holds the checks an .index and a .timeindex
// share (fileVerdict) to their order and words: length, then the broker's
// sanity check, the zero tail, then the order of the entries; a preallocated time index fails the
// sanity check first (its last slot's timestamp is 0).
func TestIndexCheckFileVerdicts(t *testing.T) {
	const sanity = "fails the broker's sanity check: "
	two := []IndexEntry{{Offset: 101, Position: 0}, {Offset: 105, Position: 4096}}
	times := []TimeIndexEntry{{Timestamp: 1000, Offset: 101}, {Timestamp: 2000, Offset: 105}}
	cases := []struct {
		name    string
		idx     *OffsetIndex
		tidx    *TimeIndex
		problem string // the verdict's problem (a prefix, for the sanity check's)
		defect  IndexDefect
	}{
		{"index partial entry", &OffsetIndex{BaseOffset: 100, Length: 19, Slots: 2, Entries: two, LastSlot: two[1]}, nil,
			"19 bytes is not a whole number of 8-byte entries", IndexLength},
		{"index sanity", &OffsetIndex{Path: "x.index", BaseOffset: 100, Length: 16, Slots: 2, Entries: two, LastSlot: IndexEntry{Offset: 99}}, nil,
			sanity + "x.index: ", IndexSanity},
		{"index zero tail", &OffsetIndex{BaseOffset: 100, Length: 40, Slots: 5, Entries: two, LastSlot: IndexEntry{Offset: 100}}, nil,
			"3 zero-filled slots after its 2 entries (preallocated, not trimmed: an unclean shutdown)", IndexZeroTail},
		{"index out of order", &OffsetIndex{BaseOffset: 100, Length: 16, Slots: 2, Entries: []IndexEntry{two[1], two[0]}, LastSlot: two[0]}, nil,
			"entry 1 (offset 101, position 0) does not follow entry 0 (offset 105, position 4096)", IndexMismatch},
		{"index whole", &OffsetIndex{BaseOffset: 100, Length: 16, Slots: 2, Entries: two, LastSlot: two[1]}, nil, "", IndexOK},
		{"time index partial entry", nil, &TimeIndex{BaseOffset: 100, Length: 25, Slots: 2, Entries: times, LastSlot: times[1]},
			"25 bytes is not a whole number of 12-byte entries", IndexLength},
		{"time index zero tail fails the sanity check", nil, &TimeIndex{Path: "x.timeindex", BaseOffset: 100, Length: 60, Slots: 5, Entries: times, LastSlot: TimeIndexEntry{Offset: 100}},
			sanity + "x.timeindex: ", IndexSanity},
		{"time index zero tail", nil, &TimeIndex{BaseOffset: 100, Length: 36, Slots: 3, Entries: times[:1], LastSlot: TimeIndexEntry{Timestamp: 1000, Offset: 100}},
			"2 zero-filled slots after its 1 entries (preallocated, not trimmed: an unclean shutdown)", IndexZeroTail},
		{"time index out of order", nil, &TimeIndex{BaseOffset: 100, Length: 24, Slots: 2, Entries: []TimeIndexEntry{times[0], {Timestamp: 1000, Offset: 105}}, LastSlot: TimeIndexEntry{Timestamp: 1000, Offset: 105}},
			"entry 1 (timestamp 1000, offset 105) does not follow entry 0 (timestamp 1000, offset 101)", IndexMismatch},
		{"time index whole", nil, &TimeIndex{BaseOffset: 100, Length: 24, Slots: 2, Entries: times, LastSlot: times[1]}, "", IndexOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ic := NewIndexCheckOf(c.idx, c.tidx)
			v := ic.index
			if c.tidx != nil {
				v = ic.time
			}
			ok := v.Problem == c.problem
			if c.defect == IndexSanity {
				ok = strings.HasPrefix(v.Problem, c.problem)
			}
			if !ok || v.Defect != c.defect {
				t.Errorf("verdict %q (defect %d), want %q (defect %d)", v.Problem, v.Defect, c.problem, c.defect)
			}
		})
	}
}
