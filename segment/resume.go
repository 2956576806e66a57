package segment

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
)

// ResumeAppender opens an Appender on a partition directory that already
// holds a log, to append after its last batch the way the broker that
// wrote it would go on appending: the last segment stays the active one
// and keeps its index state as LogSegment keeps it in memory (its index
// entries, the bytes since the last entry, its max timestamp and the
// timestamp its time-based roll counts from, its aborted transactions),
// and the leader epoch cache is leader-epoch-checkpoint's (or rebuilt from
// the log when it is absent). A zero-filled (preallocated) tail of the
// active segment is cut first; any other damaged tail is refused.
//
// opts.StartOffset is ignored (the first segment's base is the log
// start). Close rewrites the active segment's indexes, exactly sized, and
// leader-epoch-checkpoint.
//
// It writes in place: it is for tests and fixture generators, not for
// live partitions (kseg mirror writes through barrier's crash-safe
// apply).
func ResumeAppender(dir string, opts AppenderOptions) (*Appender, error) {
	pd, err := OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	segs := slices.Collect(pd.Logs())
	if len(segs) == 0 {
		return nil, fmt.Errorf("%s: no .log segment to resume", dir)
	}
	opts = opts.withDefaults()
	opts.StartOffset = segs[0].BaseOffset
	a := &Appender{dir: dir, opts: opts, roll: opts.rollConfig(), next: opts.StartOffset}
	for _, s := range segs {
		a.segments = append(a.segments, s.BaseOffset)
	}
	if pd.LeaderEpochCheckpoint != "" {
		if a.epochs, err = ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint); err != nil {
			return nil, err
		}
		a.sawV2 = true
	}
	// Every segment but the active one only moves the log end (and, without
	// a checkpoint, the epoch cache); the active one is replayed in full.
	haveCheckpoint := pd.LeaderEpochCheckpoint != ""
	for i, s := range segs {
		last := i == len(segs)-1
		if !last && haveCheckpoint {
			continue
		}
		if err := a.scanResume(s, last, !haveCheckpoint); err != nil {
			return nil, err
		}
	}
	// The log end is in the active segment, or it is its base.
	a.next = max(a.next, segs[len(segs)-1].BaseOffset)
	a.appended = a.appended || len(segs) > 1
	return a, nil
}

// keepIndexes loads the active segment s's index entries and aborted
// transactions into seg. The kept entries are checked as
// OffsetIndex.append and TimeIndex.maybeAppend check what is appended: the
// Appender goes on appending after them.
func (a *Appender) keepIndexes(s SegmentFiles, seg *activeSegment) error {
	if s.Index != "" {
		x, err := ReadOffsetIndex(s.Index, s.BaseOffset)
		if err != nil {
			return err
		}
		if err := seg.keepChecked(x.Entries, nil); err != nil {
			return fmt.Errorf("%s: %w", s.Index, err)
		}
	} else {
		idx, _, err := RebuildIndexes(s.Log, s.BaseOffset, a.opts.IndexIntervalBytes)
		if err != nil {
			return err
		}
		if err := seg.keepChecked(ParseOffsetIndex(idx, s.BaseOffset).Entries, nil); err != nil {
			return err
		}
	}
	if s.TimeIndex != "" {
		x, err := ReadTimeIndex(s.TimeIndex, s.BaseOffset)
		if err != nil {
			return err
		}
		if err := seg.keepChecked(seg.Index(), x.Entries); err != nil {
			return fmt.Errorf("%s: %w", s.TimeIndex, err)
		}
	}
	if s.TxnIndex != "" {
		x, err := ReadTxnIndex(s.TxnIndex)
		if err != nil {
			return err
		}
		for _, t := range x.Entries {
			seg.txn = AppendAbortedTxn(seg.txn, t)
			seg.lastTxnOffset, seg.hasTxn = t.LastOffset, true
		}
	}
	return nil
}

// scanResume reads one segment of a resumed log: the log end and (with
// rebuildEpochs) the epoch cache; for the active segment also
// LogSegment's in-memory state, after which the segment is open for
// appending.
func (a *Appender) scanResume(s SegmentFiles, active, rebuildEpochs bool) error {
	lf, err := OpenLog(s.Log)
	if err != nil {
		return err
	}
	seg := &activeSegment{IndexBuilder: NewIndexBuilder(s.BaseOffset, a.opts.IndexIntervalBytes)}
	sc := lf.Scanner(ScanOptions{})
	for sc.Next() {
		b := sc.Batch()
		seg.Track(b.Size(), b.LastOffset(), b.MaxTimestamp)
		a.next = max(a.next, b.NextOffset())
		a.appended = true
		if rebuildEpochs {
			if b.Magic >= 2 {
				a.sawV2 = true
				a.epochs = AssignLeaderEpoch(a.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
			} else {
				a.epochs = nil
			}
		}
	}
	err = errors.Join(sc.Err(), lf.Close())
	if err != nil {
		return err
	}
	t := sc.Tail()
	if t.Kind != TailClean && t.Kind != TailZeroFilled {
		return fmt.Errorf("%s: %s tail at position %d: repair it before appending", s.Log, t.Kind, t.ValidBytes)
	}
	if !active {
		return nil
	}
	a.next = max(a.next, s.BaseOffset)
	if err := a.keepIndexes(s, seg); err != nil {
		return err
	}
	f, err := os.OpenFile(s.Log, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	// A preallocated (zero-filled) tail is cut, as LogSegment.recover does.
	if err := f.Truncate(seg.Size()); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(seg.Size(), 0); err != nil {
		f.Close()
		return err
	}
	seg.f, seg.w = f, bufio.NewWriterSize(f, 1<<20)
	a.seg = seg
	return nil
}
