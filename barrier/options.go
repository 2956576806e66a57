// InjectOptions resolved and checked before anything is read: the mode, the
// barrier's timestamp (in milliseconds, not ahead of the clock), the index
// interval and the epochs.

package barrier

import (
	"fmt"
	"time"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

func (pl *planner) resolveOptions() error {
	o := &pl.opts
	switch o.Mode {
	case "":
		o.Mode = ModeTruncate
	case ModeTruncate, ModeAbort:
	default:
		return &edit.OptionError{Option: "mode", Detail: fmt.Sprintf("%q is neither truncate nor abort", o.Mode)}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	if o.Timestamp <= 0 {
		o.Timestamp = now().UnixMilli()
	} else if err := checkTimestamp(o.Timestamp, now(), o.Force); err != nil {
		return err
	}
	if o.IndexIntervalBytes == 0 {
		o.IndexIntervalBytes = segment.DefaultIndexIntervalBytes
	}
	if o.IndexIntervalBytes < 0 {
		return &edit.OptionError{Option: "index-interval-bytes", Detail: "must not be negative"}
	}
	if o.LeaderEpoch != nil && o.BumpLeaderEpoch != nil {
		return &edit.OptionError{Option: "leader-epoch", Detail: "give either LeaderEpoch or BumpLeaderEpoch, not both"}
	}
	if o.LeaderEpoch != nil && *o.LeaderEpoch < 0 {
		return &edit.OptionError{Option: "leader-epoch", Detail: "must not be negative"}
	}
	if o.BumpLeaderEpoch != nil && *o.BumpLeaderEpoch < 0 {
		return &edit.OptionError{Option: "bump-leader-epoch", Detail: "must not be negative"}
	}
	if o.CoordinatorEpoch != nil && *o.CoordinatorEpoch < 0 {
		return &edit.OptionError{Option: "coordinator-epoch", Detail: "must not be negative"}
	}
	return nil
}

// Bounds of a timestamp a barrier is written with, unless forced: Kafka's
// timestamps are milliseconds since the epoch, and one in another unit is
// wrong by a factor of a thousand. A timestamp far in the future is the
// worse mistake: time-based retention (UnifiedLog.deleteRetentionMsBreachedSegments)
// deletes a segment only once its largest timestamp is older than
// retention.ms, so the segment holding the barrier, and every one after
// it, would never be deleted again; the time index would point
// offsetsForTimes at it for every later time.
var minTimestamp = time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)

const maxTimestampAhead = 24 * time.Hour

// checkTimestamp refuses (an option error) a timestamp before 2010 or more
// than a day ahead of now, naming the unit it was likely given in.
func checkTimestamp(ts int64, now time.Time, force bool) error {
	t := time.UnixMilli(ts).UTC()
	if force || (!t.Before(minTimestamp) && !t.After(now.Add(maxTimestampAhead))) {
		return nil
	}
	when := fmt.Sprintf("%d ms is %s", ts, t.Format(time.RFC3339))
	if t.Year() > 9999 || t.Year() < 0 {
		when = fmt.Sprintf("%d ms is in the year %d", ts, t.Year())
	}
	var guess string
	switch {
	case ts >= 1e17:
		guess = fmt.Sprintf(": in nanoseconds? (%d ns is %s)", ts, time.Unix(0, ts).UTC().Format(time.RFC3339))
	case ts >= 1e14:
		guess = fmt.Sprintf(": in microseconds? (%d µs is %s)", ts, time.UnixMicro(ts).UTC().Format(time.RFC3339))
	case ts < 1e11 && ts >= minTimestamp.Unix():
		guess = fmt.Sprintf(": in seconds? (%d s is %s)", ts, time.Unix(ts, 0).UTC().Format(time.RFC3339))
	}
	where := "more than a day ahead of the clock"
	if t.Before(minTimestamp) {
		where = "before 2010"
	}
	return &edit.OptionError{Option: "timestamp", Detail: fmt.Sprintf("%s, %s%s; Kafka timestamps are milliseconds since the epoch, and a barrier dated in the future would keep time-based retention from deleting its segment and every later one; force to write it anyway",
		when, where, guess)}
}
