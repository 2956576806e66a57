package mm2

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kseg/kseg/decode"
	mm2rec "github.com/kseg/kseg/decode/mm2"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Verify compares target, a MirrorMaker 2 replica of source (both
// partition directories), record by record, and checks the offset syncs
// and checkpoints opts names against both. It reads each log once,
// streaming, with memory bounded by opts.Window whatever their size (and
// by the offset syncs and checkpoints of the partition pair, which it
// holds). Errors are operational: what it finds is in the Report.
func Verify(source, target string, opts Options) (*Report, error) {
	v, err := prepare(source, target, opts)
	if err != nil {
		return nil, err
	}
	src := openStream(v.srcCfg)
	tgt := openStream(v.tgtCfg)
	m := newMatcher(opts, src, tgt, v.srcCfg)
	m.srcLookup, m.tgtLookup, m.crossings, m.downRanks = v.srcLookup, v.tgtLookup, v.crossings, v.downRanks
	m.run()
	src.wait()
	for _, s := range []*stream{src, m.src, tgt} {
		if s.err != nil {
			return nil, s.err
		}
	}
	return v.report(m, src), nil
}

// verification is what Verify prepares before it reads the logs.
type verification struct {
	opts           Options
	rep            *Report
	srcCfg, tgtCfg streamConfig
	syncs          []syncRecord
	checkpoints    []checkpoint
	srcLookup      *offsetLookup
	tgtLookup      *offsetLookup
	crossings      *crossings
	downRanks      *offsetRanks
}

func prepare(source, target string, opts Options) (*verification, error) {
	v := &verification{opts: opts, rep: &Report{Isolation: opts.Isolation, Window: opts.Window}}
	if v.rep.Window <= 0 {
		v.rep.Window = DefaultWindow
	}
	spd, err := v.side(source, &v.rep.Source)
	if err != nil {
		return nil, err
	}
	tpd, err := v.side(target, &v.rep.Target)
	if err != nil {
		return nil, err
	}
	v.srcCfg = baseConfig(spd, &v.rep.Source, opts.Progress)
	v.tgtCfg = baseConfig(tpd, &v.rep.Target, opts.Progress)
	v.tgtCfg.logAppendTimeIsReplaced = true
	// The target's own aborted transactions (MM2's exactly-once mode
	// aborts a transaction it then copies again) are invisible to a
	// read_committed consumer of the target: left out.
	v.tgtCfg.txns = sync.OnceValues(func() (txnState, error) { return replayTxns(tpd, v.rep.Target.LogStart) })
	if opts.Isolation == ReadCommitted {
		v.srcCfg.txns = sync.OnceValues(func() (txnState, error) { return replayTxns(spd, v.rep.Source.LogStart) })
		v.srcCfg.readCommitted = true
	}
	// The offset syncs of the source partition and the checkpoints of
	// the target's, when given: found by the partitions' names.
	for _, r := range []struct {
		topic, flag string
		read        func() error
	}{{opts.OffsetSyncs, "--offset-syncs", v.readSyncs}, {opts.Checkpoints, "--checkpoints", v.readCheckpoints}} {
		if r.topic == "" {
			continue
		}
		if err := v.named(r.flag); err != nil {
			return nil, err
		}
		if err := r.read(); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// side opens a partition directory and fills what its files say.
func (v *verification) side(dir string, s *Side) (*segment.PartitionDir, error) {
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	*s = Side{Dir: dir, Topic: pd.Topic, Partition: pd.Partition, LogStart: -1, LogEnd: -1, LastStable: -1, CleanerCheckpoint: -1}
	for seg := range pd.Logs() {
		s.LogStart = seg.BaseOffset
		break
	}
	if ls, err := segment.CheckpointOffset(pd, segment.LogStartOffsetCheckpointName); err == nil && ls > s.LogStart {
		s.LogStart = ls
	}
	s.LogStart = max(s.LogStart, 0)
	if c, err := segment.CheckpointOffset(pd, segment.CleanerOffsetCheckpointName); err == nil {
		s.CleanerCheckpoint = c
	}
	return pd, nil
}

func baseConfig(pd *segment.PartitionDir, s *Side, progress func(int64)) streamConfig {
	return streamConfig{dir: s.Dir, pd: pd, logStart: s.LogStart, from: s.LogStart, prevOff: s.LogStart - 1,
		stop: -1, findings: true, progress: progress}
}

// eachRecord calls fn for every data record of a partition directory
// (an internal topic's: small, read whole).
func eachRecord(dir string, fn func(offset int64, key, value []byte)) error {
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return err
	}
	var dec decode.Decoder
	for seg := range pd.Logs() {
		lf, err := segment.OpenLog(seg.Log)
		if err != nil {
			return err
		}
		sc := lf.Scanner(segment.ScanOptions{Path: seg.Log})
		for sc.Next() {
			if sc.Batch().IsControl() {
				continue
			}
			if err := dec.Records(sc.Batch(), func(r *decode.Record) error {
				fn(r.Offset, r.Key, r.Value)
				return nil
			}); err != nil {
				sc.Close()
				lf.Close()
				return fmt.Errorf("%s: %w", seg.Log, err)
			}
		}
		err = sc.Err()
		sc.Close()
		lf.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readSyncs reads the offset syncs of the source partition (prepare:
// Options.OffsetSyncs is set and the partitions are named).
func (v *verification) readSyncs() error {
	src := &v.rep.Source
	seen := map[[2]int64]bool{}
	err := eachRecord(v.opts.OffsetSyncs, func(off int64, key, value []byte) {
		r, err := mm2rec.Decode(mm2rec.OffsetSyncs, key, value)
		switch {
		case err != nil:
			v.undecodable(v.opts.OffsetSyncs, "offset sync", off, err)
		case r.Tombstone:
		case r.OffsetSync.Topic == src.Topic && r.OffsetSync.Partition == src.Partition:
			s := [2]int64{r.OffsetSync.UpstreamOffset, r.OffsetSync.DownstreamOffset}
			if !seen[s] {
				seen[s] = true
				v.syncs = append(v.syncs, syncRecord{up: s[0], down: s[1]})
			}
		default:
			v.rep.SyncsOther++
		}
	})
	if err != nil {
		return err
	}
	v.rep.OffsetSyncs = []SyncCheck{}
	// A later sync at or below a sync's upstream offset takes its place:
	// OffsetSyncStore translates from the latest sync at or below a
	// group's offset, and clears what it holds when the upstream offset
	// goes back (a restarted task, a re-created source topic).
	minLater := int64(1<<63 - 1)
	for i := len(v.syncs) - 1; i >= 0; i-- {
		v.syncs[i].superseded = minLater <= v.syncs[i].up
		minLater = min(minLater, v.syncs[i].up)
	}
	us, ds := make([]int64, len(v.syncs)), make([]int64, len(v.syncs))
	for i, s := range v.syncs {
		us[i], ds[i] = s.up, s.down
	}
	v.srcLookup, v.tgtLookup = newOffsetLookup(us), newOffsetLookup(ds)
	return nil
}

// named refuses a translation check of a partition whose directory does
// not say its topic and partition.
func (v *verification) named(flag string) error {
	for _, s := range []*Side{&v.rep.Source, &v.rep.Target} {
		if s.Topic == "" || s.Partition < 0 {
			return &NameError{Dir: s.Dir, Flag: flag}
		}
	}
	return nil
}

// NameError: a partition directory not named <topic>-<partition>, where
// the offset syncs or checkpoints must be matched to it by name.
type NameError struct{ Dir, Flag string }

func (e *NameError) Error() string {
	return fmt.Sprintf("%s: the name is not <topic>-<partition>, which %s needs to find the partition's records", e.Dir, e.Flag)
}

func (v *verification) undecodable(dir, what string, off int64, err error) {
	f := finding.Newf(finding.CorruptRecords, "%s: the %s at offset %d does not decode: %v (MM2 fails reading it)", filepath.Base(dir), what, off, err)
	f.PartitionDir, f.Offset = dir, off
	v.rep.Findings = append(v.rep.Findings, f)
}

// readCheckpoints reads the checkpoints of the target partition, and
// finds those for partitions without offset syncs (prepare:
// Options.Checkpoints is set and the partitions are named).
func (v *verification) readCheckpoints() error {
	tgt := &v.rep.Target
	topic := mm2rec.TopicOf(filepath.Base(filepath.Clean(v.opts.Checkpoints)))
	mirrored := v.mirroredPartitions()
	reported := map[string]bool{}
	var us, ds []int64
	err := eachRecord(v.opts.Checkpoints, func(off int64, key, value []byte) {
		r, err := mm2rec.Decode(mm2rec.Checkpoints, key, value)
		if err != nil {
			v.undecodable(v.opts.Checkpoints, "checkpoint", off, err)
			return
		}
		c := r.Checkpoint
		if mirrored != nil && !r.Tombstone {
			up := mm2rec.UpstreamTopic(c.Topic, topic.Alias, topic.Separator)
			name := fmt.Sprintf("%s-%d", c.Topic, c.Partition)
			if !mirrored[fmt.Sprintf("%s-%d", up, c.Partition)] && !reported[name] {
				reported[name] = true
				f := finding.Newf(finding.CheckpointUnmirrored,
					"checkpoints for %s (group %s, first at offset %d of %s) but no offset sync for %s-%d: MirrorCheckpointTask emits none for a partition MM2 never mirrored",
					name, c.Group, off, filepath.Base(v.opts.Checkpoints), up, c.Partition)
				f.Subject, f.PartitionDir, f.Offset = name, v.opts.Checkpoints, off
				v.rep.Findings = append(v.rep.Findings, f)
			}
		}
		switch {
		case r.Tombstone:
		case c.Topic == tgt.Topic && c.Partition == tgt.Partition:
			v.checkpoints = append(v.checkpoints, checkpoint{group: c.Group, up: c.UpstreamOffset, down: c.DownstreamOffset, logOffset: off})
			us, ds = append(us, c.UpstreamOffset), append(ds, c.DownstreamOffset)
		default:
			v.rep.CheckpointsOther++
		}
	})
	if err != nil {
		return err
	}
	v.rep.Checkpoints = []CheckpointCheck{}
	v.crossings, v.downRanks = newCrossings(us), newOffsetRanks(ds)
	return nil
}

// mirroredPartitions are the upstream partitions ("orders-0") the offset
// syncs name; nil without them.
func (v *verification) mirroredPartitions() map[string]bool {
	if v.opts.OffsetSyncs == "" {
		return nil
	}
	out := map[string]bool{}
	_ = eachRecord(v.opts.OffsetSyncs, func(_ int64, key, value []byte) {
		if r, err := mm2rec.Decode(mm2rec.OffsetSyncs, key, value); err == nil {
			out[fmt.Sprintf("%s-%d", r.OffsetSync.Topic, r.OffsetSync.Partition)] = true
		}
	})
	return out
}

// report fills the Report from the finished comparison.
// src is the source's first stream, which read the whole log even when
// far scans took over the comparison.
func (v *verification) report(m *matcher, src *stream) *Report {
	rep := v.rep
	for _, s := range []struct {
		side *Side
		st   *stream
	}{{&rep.Source, src}, {&rep.Target, m.tgt}} {
		st := s.st.stats
		s.side.Records, s.side.ControlRecords, s.side.Aborted = st.records, st.control, st.aborted
		s.side.Uncommitted, s.side.Holes = st.uncommitted, st.holes
		s.side.LogAppendTime, s.side.NoTimestamp = st.logAppendTime, st.noTimestamp
		s.side.LogEnd = max(st.logEnd, s.side.LogStart)
		s.side.LastStable = st.lastStable
		rep.Findings = append(rep.Findings, s.st.finds...)
	}
	rep.Copies, rep.Matched = m.copies, m.matched
	rep.Runs, rep.Counts, rep.RunCounts = m.runs.kept, m.runs.counts, m.runs.runs
	slices.SortStableFunc(rep.Runs, func(a, b Run) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(max(a.Source.First, a.Target.First), max(b.Source.First, b.Target.First)))
	})
	rep.Mirrored = m.mirrored
	if v.syncs != nil {
		rep.OffsetSyncs = checkSyncs(v.syncs, v.srcLookup, v.tgtLookup, &rep.Source, &rep.Target)
	}
	if v.checkpoints != nil {
		rep.Checkpoints = judgeCheckpoints(v.checkpoints, v.crossings, v.downRanks, &rep.Target)
	}
	return rep
}
