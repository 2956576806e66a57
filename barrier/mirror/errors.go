package mirror

import (
	"fmt"

	"github.com/kseg/kseg/segment/edit"
)

// Refusal reasons of a mirror, besides the ones every write command shares
// (edit.Refuse*).
const (
	// RefuseTopicID: a mirror's source and destination have different
	// topic ids in partition.metadata (a mirror keeps its source's).
	RefuseTopicID edit.Reason = "topic-id"
	// RefuseSameDir: a mirror's source and destination are the same
	// directory.
	RefuseSameDir edit.Reason = "same-directory"
)

// DivergedError is a mirror destination whose log is not a prefix of its
// source's: at Offset, DST holds a batch that SRC does not (or SRC has
// none). Options.Align truncates DST there first; without it nothing
// is done. The CLI maps it to exit status 3 (a finding).
type DivergedError struct {
	Src, Dst string
	Divergence
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("%s has diverged from %s at offset %d: %s", e.Dst, e.Src, e.Offset, e.Reason)
}

// GapError is a mirror destination whose log ends before its source's log
// start: the offsets in between are gone from the source (retention), so
// appending would leave a hole. The CLI maps it to exit status 3.
type GapError struct {
	Src, Dst         string
	DstEnd, SrcStart int64
}

func (e *GapError) Error() string {
	return fmt.Sprintf("%s ends at offset %d but %s starts at %d: the offsets between are gone from the source (a broker would truncate the destination fully and restart it at the source's log start; kseg does not)",
		e.Dst, e.DstEnd, e.Src, e.SrcStart)
}
