// Package status summarises a partition directory in one pass, as an
// operator reads `kafka-log-dirs --describe` (size, offsets) and adds what
// kseg knows offline: the segments, the records and the time they span,
// the producers and open transactions a loading broker rebuilds, the
// producer snapshot it would start from, the leader epoch, and a count of
// what is wrong.
//
// It reads every segment once, checking each batch's CRC (a verdict of
// "healthy" over bytes it never checked would be a lie; the CRC walk is
// the least any honest summary costs, and it runs on two cores beside the
// header walk: segment.CRCScanner), not the records themselves and not the
// indexes (`kseg check` verifies those), and runs the producer-state
// rebuild as a restarting broker does (psm.Rebuild from the newest usable
// snapshot). It never writes.
package status

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Partition is the status of one partition directory.
type Partition struct {
	Dir       string
	Topic     string // "" when the directory name does not parse
	Partition int32
	// TopicID is partition.metadata's topic id ("" when absent).
	TopicID string
	// Size is the bytes of every regular file in the directory; Files
	// how many there are.
	Size  int64
	Files int
	// Segments counts the .log files; LogBytes their bytes.
	Segments int
	LogBytes int64
	// The offsets a loading broker starts the partition with: the log
	// start (max of log-start-offset-checkpoint and the first segment's
	// baseOffset, LogLoader), the log end, the high watermark
	// (replication-offset-checkpoint, Partition.createLog) and the last
	// stable offset.
	LogStartOffset, LogEndOffset, HighWatermark, LastStableOffset int64
	// HighWatermarkCheckpointed: the high watermark is the partition's
	// replication-offset-checkpoint entry; without one a broker starts at
	// the log start offset.
	HighWatermarkCheckpointed bool
	// Batches and Records over every segment; legacy (v0/v1) entries count
	// one record each, a compressed wrapper's inner messages uncounted.
	Batches, Records int64
	LegacyEntries    int64
	// FirstTimestamp is the smallest batch timestamp (baseTimestamp of a
	// v2 batch, the entry's own timestamp for legacy), LastTimestamp the
	// largest maxTimestamp; -1 when no batch carries one.
	FirstTimestamp, LastTimestamp int64
	// Producers, OpenTransactions: the rebuilt producer state.
	Producers        int
	OpenTransactions []psm.Txn
	// LastSnapshot is the newest <offset>.snapshot's offset (-1 none);
	// SnapshotLoaded the one the rebuild started from (-1 none: the log
	// was replayed from its start, or the broker skips the rebuild).
	LastSnapshot, SnapshotLoaded int64
	RebuildSkipped               bool
	// LeaderEpoch and LeaderEpochStart are the last leader-epoch-checkpoint
	// entry (-1 when none).
	LeaderEpoch      int32
	LeaderEpochStart int64
	// Findings: the rebuild's anomalies and the damage the CRC walk met
	// (a torn or corrupt tail, mid-log corruption), in log order.
	Findings []finding.Finding
}

// Count counts the findings of severity error and warning.
func (p *Partition) Count() (errors, warnings int) { return finding.Count(p.Findings) }

// Options tune Read.
type Options struct {
	// PSM are the rebuild's options; psm.DefaultOptions when zero.
	PSM *psm.Options
	// LogDirs, shared by the Reads of one run over a log directory, reads
	// its checkpoints once (segment.LogDirCache); nil reads them for
	// each partition.
	LogDirs *segment.LogDirCache
}

// Read summarises the partition directory at dir.
func Read(dir string, opts Options) (*Partition, error) {
	pd, err := opts.LogDirs.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	p := &Partition{Dir: dir, Topic: pd.Topic, Partition: pd.Partition, FirstTimestamp: -1, LastTimestamp: -1,
		LastSnapshot: -1, SnapshotLoaded: -1, LeaderEpoch: -1, LeaderEpochStart: -1}
	if err := p.sizes(dir); err != nil {
		return nil, err
	}
	if pd.PartitionMetadata != "" {
		if pm, err := segment.ReadPartitionMetadata(pd.PartitionMetadata); err == nil {
			p.TopicID = pm.TopicIDString
		}
	}
	if pd.LeaderEpochCheckpoint != "" {
		if es, err := segment.ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint); err == nil && len(es) > 0 {
			last := es[len(es)-1]
			p.LeaderEpoch, p.LeaderEpochStart = last.Epoch, last.StartOffset
		}
	}
	if n := len(pd.Snapshots); n > 0 {
		p.LastSnapshot = pd.Snapshots[n-1].Offset
	}
	for s := range pd.Logs() {
		p.Segments++
		found, err := p.walk(s.Log)
		if err != nil {
			return nil, err
		}
		p.Findings = append(p.Findings, found...)
	}
	if p.Segments == 0 {
		return p, nil
	}
	po := psm.DefaultOptions()
	if opts.PSM != nil {
		po = *opts.PSM
	}
	po.VerifyCRC = false
	ld, cerr := psm.ReadLogDirState(pd)
	if cerr != nil {
		p.Findings = append(p.Findings, p.located(finding.New(finding.CheckpointCorrupt, cerr.Error())))
	}
	if po.LogStartOffset < 0 && ld.LogStartOffset >= 0 {
		po.LogStartOffset = ld.LogStartOffset
	}
	if po.HighWatermark < 0 {
		po.HighWatermark = ld.BrokerHighWatermark()
		p.HighWatermarkCheckpointed = ld.HighWatermark >= 0
	}
	po.CleanShutdown = ld.CleanShutdown
	res, err := psm.Rebuild(pd, po)
	if err != nil {
		if errors.Is(err, psm.ErrSnapshotUnusable) {
			p.Findings = append(p.Findings, p.located(finding.New(finding.SnapshotCorrupt, err.Error())))
			return p, nil
		}
		return nil, err
	}
	p.LogStartOffset, p.LogEndOffset, p.HighWatermark, p.LastStableOffset = res.LogStartOffset, res.LogEndOffset, res.HighWatermark, res.LastStableOffset
	p.Producers, p.OpenTransactions = len(res.Producers), res.Ongoing
	p.SnapshotLoaded, p.RebuildSkipped = res.SnapshotLoaded, res.RebuildSkipped
	for _, a := range res.Anomalies {
		// The walk reported the damage at the end of every segment; the
		// rebuild meets the same damage again in those it replays.
		if a.Kind == finding.CorruptLog || a.Kind == finding.ZeroTail {
			continue
		}
		p.Findings = append(p.Findings, p.located(a))
	}
	return p, nil
}

// located gives f the partition as its subject and directory.
func (p *Partition) located(f finding.Finding) finding.Finding {
	if f.Subject == "" {
		f.Subject = filepath.Base(filepath.Clean(p.Dir))
	}
	if f.PartitionDir == "" {
		f.PartitionDir = p.Dir
	}
	return f
}

// sizes adds up the regular files of dir.
func (p *Partition) sizes(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed under us (a broker's retention)
		}
		if err != nil {
			return err
		}
		p.Files++
		p.Size += fi.Size()
	}
	return nil
}

// walk reads the batch headers of one .log, checking every CRC, and
// returns the batches whose CRC fails and the damage it ends on.
func (p *Partition) walk(path string) (found []finding.Finding, err error) {
	lf, err := segment.OpenLog(path)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	p.LogBytes += lf.Size
	sc := lf.CRCScanner(segment.ScanOptions{Mmap: true}, true)
	defer sc.Close()
	// A broker truncating the mapped segment under the walk faults on
	// access: an error for the segment instead of a crash (as psm's
	// scanSegment).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			found, err = nil, fmt.Errorf("%s: the file changed while it was read (%v)", path, e)
		}
	}()
	name := filepath.Base(path)
	at := func(kind finding.Kind, pos, offset int64, msg string) finding.Finding {
		f := p.located(finding.New(kind, msg))
		f.File, f.Position, f.Offset = path, pos, offset
		return f
	}
	for sc.Next() {
		b := sc.Batch()
		p.Batches++
		if !sc.CRCValid() {
			// The broker's recovery (LogSegment.recover, batch.ensureValid)
			// truncates the log at this batch.
			found = append(found, at(finding.CRCMismatch, sc.Pos(), b.BaseOffset,
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x", name, sc.Pos(), b.BaseOffset, b.CRC, b.ComputeCRC())))
		}
		first, last := b.BaseTimestamp, b.MaxTimestamp
		if b.IsLegacy() {
			p.Records++
			p.LegacyEntries++
			first = b.MaxTimestamp
		} else {
			p.Records += int64(max(b.RecordCount, 0))
		}
		if first >= 0 && (p.FirstTimestamp < 0 || first < p.FirstTimestamp) {
			p.FirstTimestamp = first
		}
		p.LastTimestamp = max(p.LastTimestamp, last)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	t := sc.Tail()
	switch t.Kind {
	case segment.TailClean:
	case segment.TailZeroFilled:
		found = append(found, at(finding.ZeroTail, t.ValidBytes, -1,
			fmt.Sprintf("%s: %d zero bytes after position %d (preallocated segment; the broker truncates them on recovery)", name, t.InvalidBytes(), t.ValidBytes)))
	case segment.TailTornHeader, segment.TailTornBatch:
		found = append(found, at(finding.TornTail, t.ValidBytes, t.Err.BaseOffset,
			fmt.Sprintf("%s (%d invalid bytes at the end; validBytes %d)", t.Err.Error(), t.InvalidBytes(), t.ValidBytes)))
	case segment.TailCorrupt:
		found = append(found, at(finding.CorruptBatch, t.Err.Pos, t.Err.BaseOffset,
			fmt.Sprintf("%s (scan stopped; validBytes %d, %d bytes not read)", t.Err.Error(), t.ValidBytes, t.InvalidBytes())))
	}
	return found, nil
}
