package scan

import (
	"fmt"
	"path/filepath"
	"runtime/debug"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// LogSummary is the end-of-file summary of a .log.
type LogSummary struct {
	Batches, Records int64
	FirstOffset      int64
	LastOffset       int64
	CRCErrors        int64
	Tail             segment.Tail
	BytesScanned     int64
	Codecs           map[string]int64
	SelectedBatches  int64
	// SelFirst and SelLast: the offsets of the first and last selected
	// batches (-1 before one is).
	SelFirst, SelLast    int64
	NonConsecutive       int64
	ControlByType        map[string]int64
	MaxBytesLimitApplied bool

	// codecs counts batches by attribute bits until foldCodecs puts them
	// in Codecs (a map update per batch was 1 % of a batch-level dump).
	codecs [decode.AttrCompressionMask + 1]int64
}

// dumpLog reads a .log (or a KRaft snapshot or bootstrap.checkpoint,
// which are framed the same): every batch, then the tail.
func (st *Run) dumpLog(f File) (err error) {
	lf, err := segment.OpenLog(f.Path)
	if err != nil {
		return err
	}
	defer lf.Close()
	o := st.o
	// Large segments are mapped (no copy out of the page cache); a mapped
	// file that shrinks under the dump faults, which SetPanicOnFault turns
	// into an error for this file instead of a crash (workers do the same).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			if err = faultError(e, f.Path); err == nil {
				panic(e)
			}
			if st.pipe != nil {
				st.pipe.drain(nil, nil, err) // throw away the jobs in flight
			}
		}
	}()
	sum := LogSummary{FirstOffset: -1, LastOffset: -1, SelFirst: -1, SelLast: -1, Codecs: map[string]int64{}, ControlByType: map[string]int64{},
		MaxBytesLimitApplied: o.MaxBytesLimit}
	st.p.LogStart(f)
	if err := st.kafkaSlice(f, lf); err != nil {
		return err
	}
	if o.MaxBytesLimit && o.MaxBytes == 0 {
		// --max-bytes 0: FileRecords.slice(0, 0) holds no batch.
		st.p.LogEnd(f, &sum)
		return nil
	}
	lc, tail, err := st.scanBatches(f, lf, &sum)
	if err != nil {
		return err
	}
	sum.foldCodecs()
	sum.Tail = tail
	sum.BytesScanned = sum.Tail.End
	// A batch cut by --max-bytes is where the reader was told to stop, not
	// a torn write (kafka-dump-log likewise stays silent then).
	if cut := sum.Tail.End < lf.Size; !cut || (sum.Tail.Kind != segment.TailTornBatch && sum.Tail.Kind != segment.TailTornHeader) {
		st.reportTail(f, sum.Tail)
	}
	lc.summarise(&sum)
	st.p.LogEnd(f, &sum)
	return nil
}

// scanBatches renders every batch of the log in file order and counts it
// in sum, scanning on past structural damage (resync.go) as far as the
// options allow; it returns the check of the whole log and the tail
// where the last scan stopped.
func (st *Run) scanBatches(f File, lf *segment.LogFile, sum *LogSummary) (*logCheck, segment.Tail, error) {
	// One scanner run per stretch of valid batches: after structural
	// damage, resync finds where the next one starts.
	ls := &logScan{st: st, f: f, lf: lf, sum: sum, lc: newLogCheck(f, st.o), lastRecord: -1}
	var sc *segment.Scanner
	for start, run := int64(0), 0; ; run++ {
		sc = lf.Scanner(segment.ScanOptions{Start: start, Limit: st.o.MaxBytes, Mmap: true})
		defer sc.Close()
		for sc.Next() {
			if err := ls.batch(sc, run); err != nil {
				return nil, segment.Tail{}, err
			}
		}
		if err := ls.flush(); err != nil {
			return nil, segment.Tail{}, err
		}
		if err := sc.Err(); err != nil {
			return nil, segment.Tail{}, err
		}
		next, ok, err := ls.runEnd(run, sc.Tail())
		if err != nil {
			return nil, segment.Tail{}, err
		}
		if !ok {
			break
		}
		start = next
	}
	return ls.lc, sc.Tail(), nil
}

// logScan is one .log on its way through scanBatches. Batches are
// rendered by a Renderer, here or in jobs on workers (pipeline.go), and
// committed to the summary in file order.
type logScan struct {
	st  *Run
	f   File
	lf  *segment.LogFile
	sum *LogSummary
	lc  *logCheck
	j   *batchJob // the job being filled for the workers
	// lastRecord is the offset of the file's last record so far (-1
	// before the first).
	lastRecord int64
}

// batch takes the batch sc is on: the observers see it, the checks of
// its place in the log run, it is counted, and rendered (here, or in a
// job for the workers).
func (ls *logScan) batch(sc *segment.Scanner, run int) error {
	st, o, b, pos := ls.st, ls.st.o, sc.Batch(), sc.Pos()
	if st.walkVerify != nil {
		st.walkVerify.batch(ls.f, run, pos, b)
	}
	if st.Observer != nil {
		st.Observer.Batch(ls.f, run, pos, b)
	}
	if fds := ls.lc.check(pos, b); len(fds) > 0 {
		if err := ls.flush(); err != nil {
			return err
		}
		for _, fd := range fds {
			st.report(fd)
		}
	}
	if end := pos + b.Size(); end >= st.progNext {
		st.progNext = st.prog.Scanned(st.progFile, end)
	}
	ls.sum.count(b)
	if o.Filtered() && o.BatchSelected(b) {
		ls.sum.countSelected(b)
		st.noteBatch(ls.f.Path, b)
	}
	pipe := st.pipe
	if pipe == nil {
		return st.renderSerial(&st.serialJob, ls.f, pos, b, ls.sum, &ls.lastRecord)
	}
	if ls.j == nil {
		ls.j = pipe.job()
		ls.j.file = ls.f.Path
	}
	ls.j.add(pos, b, o.BatchSelected(b), sc.Window())
	if ls.j.full() {
		err := pipe.submit(ls.j, ls.sum, &ls.lastRecord)
		if ls.j = nil; err != nil {
			return pipe.drain(ls.sum, &ls.lastRecord, err)
		}
	}
	return nil
}

// flush emits every batch handed to the workers so far, so that a
// finding made on this goroutine follows them in the output.
func (ls *logScan) flush() error {
	pipe := ls.st.pipe
	if pipe == nil {
		return nil
	}
	var err error
	if ls.j != nil {
		err = pipe.submit(ls.j, ls.sum, &ls.lastRecord)
		ls.j = nil
	}
	return pipe.drain(ls.sum, &ls.lastRecord, err)
}

// runEnd ends a scanner run that stopped with tail t: the observers hear
// of it, and it says whether and where to scan on (after damage, by
// resync; under DumpLogSegments, where FileLogInputStream reads on).
func (ls *logScan) runEnd(run int, t segment.Tail) (int64, bool, error) {
	st := ls.st
	if st.walkVerify != nil {
		st.walkVerify.runEnd(ls.f, run, t)
	}
	if st.Observer != nil {
		st.Observer.RunEnd(ls.f, run, t)
	}
	if st.o.DumpLogSegments {
		return st.kafkaTail(ls.f, ls.lc, ls.lf, t, ls.sum, &ls.lastRecord)
	}
	next, ok := st.resync(ls.lc, ls.lf, t)
	return next, ok, nil
}

// Observer sees the batches of each .log a run reads, on the goroutine
// that calls Files, in file order, before anything else is done with
// them; b is valid only during the call. run counts the scanner's runs: 0
// up to the first structural damage, one more after each resync. RunEnd
// says where a run stopped.
type Observer interface {
	Batch(f File, run int, pos int64, b *decode.Batch)
	RunEnd(f File, run int, t segment.Tail)
}

// count adds batch b to the summary.
func (sum *LogSummary) count(b *decode.Batch) {
	sum.Batches++
	if sum.FirstOffset < 0 {
		sum.FirstOffset = b.BaseOffset
	}
	sum.LastOffset = b.LastOffset()
	sum.codecs[b.Compression()]++
}

// countSelected counts b among the batches the filters selected.
func (sum *LogSummary) countSelected(b *decode.Batch) {
	if sum.SelFirst < 0 {
		sum.SelFirst = b.BaseOffset
	}
	sum.SelLast = b.LastOffset()
}

// foldCodecs moves the per-codec counts into Codecs, before a printer
// reads the summary.
func (sum *LogSummary) foldCodecs() {
	for c, n := range sum.codecs {
		if n > 0 {
			sum.Codecs[decode.Compression(c).String()] += n
		}
	}
	sum.codecs = [len(sum.codecs)]int64{}
}

// renderSerial renders batch b at pos with job j on the dump goroutine and
// commits it; an operational error stops the file.
func (st *Run) renderSerial(j *batchJob, f File, pos int64, b *decode.Batch, sum *LogSummary, lastRecord *int64) error {
	j.reset()
	j.file = f.Path
	j.add(pos, b, st.o.BatchSelected(b), nil)
	st.render.render(j)
	st.commit(j, sum, lastRecord)
	return j.err
}

// reportTail turns the scan's tail into findings: a zero-filled tail is a
// warning (preallocation), anything else after validBytes an error.
func (st *Run) reportTail(f File, t segment.Tail) {
	switch t.Kind {
	case segment.TailClean:
	case segment.TailZeroFilled:
		st.report(fileFinding(finding.ZeroTail, f.Path, t.ValidBytes, -1,
			fmt.Sprintf("%s: %d zero bytes after position %d (preallocated segment; the broker truncates them on recovery)",
				filepath.Base(f.Path), t.InvalidBytes(), t.ValidBytes)))
	case segment.TailTornHeader, segment.TailTornBatch:
		st.report(fileFinding(finding.TornTail, f.Path, t.ValidBytes, t.Err.BaseOffset,
			fmt.Sprintf("%s (%d invalid bytes at the end; validBytes %d)", t.Err.Error(), t.InvalidBytes(), t.ValidBytes)))
	case segment.TailCorrupt:
		st.report(fileFinding(finding.CorruptBatch, f.Path, t.Err.Pos, t.Err.BaseOffset,
			fmt.Sprintf("%s (scan stopped; validBytes %d, %d bytes not read)", t.Err.Error(), t.ValidBytes, t.InvalidBytes())))
	}
}
