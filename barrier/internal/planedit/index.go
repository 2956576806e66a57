// Package planedit holds the steps barrier's write planners
// (inject-barrier, mirror, repair) take the same way over a segment's
// indexes when they cut it (their first look at the directory is
// edit.StartPlan, which restore takes too).
package planedit

import "github.com/kseg/kseg/segment"

// Index is one of a segment's two indexes as a write planner keeps its
// entries below a cut (OffsetIndex.truncateTo, TimeIndex.truncateTo): the
// offset index (.index) or the time index (.timeindex), of entries E.
type Index[E any] struct {
	// Suffix is the file's suffix, for messages.
	Suffix string
	// Read reads the entries of the file at path of the segment whose
	// baseOffset is base; Parse those of the bytes rebuilt for it
	// (segment.RebuildIndexes).
	Read  func(path string, base int64) ([]E, error)
	Parse func(b []byte, base int64) []E
}

// OffsetIndex and TimeIndex are the segment's .index and .timeindex.
var (
	OffsetIndex = Index[segment.IndexEntry]{Suffix: segment.IndexSuffix,
		Read: func(path string, base int64) ([]segment.IndexEntry, error) {
			x, err := segment.ReadOffsetIndex(path, base)
			return x.Entries, err
		},
		Parse: func(b []byte, base int64) []segment.IndexEntry { return segment.ParseOffsetIndex(b, base).Entries }}
	TimeIndex = Index[segment.TimeIndexEntry]{Suffix: segment.TimeIndexSuffix,
		Read: func(path string, base int64) ([]segment.TimeIndexEntry, error) {
			x, err := segment.ReadTimeIndex(path, base)
			return x.Entries, err
		},
		Parse: func(b []byte, base int64) []segment.TimeIndexEntry { return segment.ParseTimeIndex(b, base).Entries }}
)

// Count is the number of entries of the file at path of the segment
// whose baseOffset is base: 0 when there is none, or it does not read.
func (ix Index[E]) Count(path string, base int64) int {
	if path == "" {
		return 0
	}
	all, err := ix.Read(path, base)
	if err != nil {
		return 0
	}
	return len(all)
}

// Kept is the entries of all that kept keeps, in order (nil when none).
func Kept[E any](all []E, kept func(E) bool) []E {
	var out []E
	for _, e := range all {
		if kept(e) {
			out = append(out, e)
		}
	}
	return out
}
