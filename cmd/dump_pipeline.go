package cmd

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Rendering a .log batch by batch, serially or on worker goroutines.
//
// Everything dump does with one batch — CRC check, decompression, record
// decoding, control records, rendering, findings — is batchRenderer.render,
// and everything that depends on the batches before it (summary counts,
// the non-consecutive offset checks, finding counts) is dumpState.commit,
// which runs in file order. The serial path renders with the real printer
// and commits at once. The parallel path (batchPipeline) is
//
//	scanner (dump goroutine) ──jobs──▶ N-1 workers: render into the job's buffer
//	        │                                   │
//	        └── in-flight queue, file order ◀── done
//	             head done? emit its buffer, commit, release its windows
//	             head not done? render a queued job here meanwhile
//
// The dump goroutine frames batches (the scanner's sliding window; each
// job retains the windows its bytes live in, so nothing is copied), hands
// runs of them (jobs of up to jobMaxBytes) to the workers, and emits
// finished jobs strictly in file order, so the output is byte for byte the
// serial output (the golden tests and dump_parallel_test.go check both
// ways). While the oldest job is still being rendered it renders queued
// jobs itself rather than wait: N renderers are N-1 workers plus the dump
// goroutine, one per core, and no core idles while there is work. At most
// N×jobsPerWorker jobs and maxInFlightBytes of batches are in flight:
// memory stays flat whatever the segment size.

// outWriter is where a printer writes: the buffered stdout, or the buffer
// of one batch on a worker.
type outWriter interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
	Flush() error
}

// batchOut is what a worker's printer rendered for one batch: stdout bytes
// and the stderr writes made between them, in order.
type batchOut struct {
	out  []byte
	errs []errWrite
	// gaps are the record offsets the kafka printer saw, for its
	// non-consecutive offsets report.
	gaps offsetGaps
}

// errWrite is a stderr write made after the first at bytes of stdout.
type errWrite struct {
	at int
	b  []byte
}

func (b *batchOut) reset() {
	b.out, b.errs = b.out[:0], b.errs[:0]
	b.gaps.reset()
}

// emit replays b on the real streams: stdout bytes to out, and each stderr
// write after flushing out, as the serial printers do.
func (b *batchOut) emit(out outWriter, errw io.Writer) {
	last := 0
	for _, e := range b.errs {
		out.Write(b.out[last:e.at])
		last = e.at
		out.Flush()
		errw.Write(e.b)
	}
	if rest := b.out[last:]; len(rest) > outBufSize {
		// Large: flush what is buffered, and bufio then hands rest to
		// the stream whole instead of copying a buffer's worth first.
		out.Flush()
		out.Write(rest)
	} else {
		out.Write(rest)
	}
}

// batchSink is a worker's outWriter: it appends to the current job's
// batchOut.
type batchSink struct{ b *batchOut }

func (s *batchSink) Write(p []byte) (int, error) { s.b.out = append(s.b.out, p...); return len(p), nil }
func (s *batchSink) WriteString(p string) (int, error) {
	s.b.out = append(s.b.out, p...)
	return len(p), nil
}
func (s *batchSink) WriteByte(c byte) error { s.b.out = append(s.b.out, c); return nil }
func (s *batchSink) Flush() error           { return nil }

// batchSinkErr is a worker's stderr.
type batchSinkErr struct{ s *batchSink }

func (e batchSinkErr) Write(p []byte) (int, error) {
	e.s.b.errs = append(e.s.b.errs, errWrite{at: len(e.s.b.out), b: append([]byte(nil), p...)})
	return len(p), nil
}

// forkStreams are the streams of a worker's printer: stdout into the
// sink, stderr recorded in order with it.
func forkStreams(s *ui.Streams, sink *batchSink) *ui.Streams {
	c := *s
	c.Out, c.Err = sink, batchSinkErr{sink}
	return &c
}

// parallelPrinter is a printer whose batches can be rendered on workers.
type parallelPrinter interface {
	dumpPrinter
	// fork returns a printer for one worker, writing to sink. Only Batch,
	// Record, EndBatch and Finding are called on it.
	fork(sink *batchSink) dumpPrinter
	// emit writes what a fork rendered for one batch, in file order.
	emit(b *batchOut)
}

// offsetGaps follows record offsets within one batch: the first and last
// seen, and the pairs (previous, next) that are not consecutive inside it.
// Whether the batch's first record follows the previous batch's last is
// decided when batches are committed in order.
type offsetGaps struct {
	seen        bool
	first, last int64
	pairs       [][2]int64
	count       int64 // len(pairs) when pairs are not kept
}

func (g *offsetGaps) reset() { g.seen, g.pairs, g.count = false, g.pairs[:0], 0 }

// add records offset off; keep keeps the pair, not just the count.
func (g *offsetGaps) add(off int64, keep bool) {
	if !g.seen {
		g.seen, g.first = true, off
	} else if off != g.last+1 {
		g.count++
		if keep {
			g.pairs = append(g.pairs, [2]int64{g.last, off})
		}
	}
	g.last = off
}

// jobBatch is one batch of a job.
type jobBatch struct {
	pos      int64
	b        decode.Batch
	selected bool
	view     batchView
	crcValid bool
}

// batchJob is a run of consecutive batches of one .log on their way
// through dump: a few hundred KiB, so that handing a job to a worker costs
// little next to the work in it.
type batchJob struct {
	file    string
	batches []jobBatch
	bytes   int64
	wins    []*segment.Window // retained while the job is in flight (parallel)

	// Results, merged in file order by dumpState.commit.
	out       batchOut
	crcErrors int64
	selected  int64
	records   int64
	controls  []string // control record types, for the summary
	gaps      offsetGaps
	errors    int
	warnings  int
	err       error // an operational (not a finding) error: stops the file

	done chan struct{}

	// crcJob: a job of a crcPipeline (dump_crc.go), bounded by crcJobBytes;
	// crcState is its state there, crcReady that every batch's crcValid
	// holds its verdict already (the renderer then does not check again).
	crcJob   bool
	crcState int
	crcReady bool
}

// Bounds of a job.
const (
	jobMaxBytes   = 128 << 10
	jobMaxBatches = 256
)

func (j *batchJob) reset() {
	clear(j.batches) // drop references to the windows' bytes
	j.batches, j.bytes, j.wins, j.err = j.batches[:0], 0, j.wins[:0], nil
	j.out.reset()
	j.crcErrors, j.selected, j.records, j.controls, j.errors, j.warnings = 0, 0, 0, j.controls[:0], 0, 0
	j.gaps.reset()
	j.crcReady = false
}

// add appends a batch; win is the window its bytes live in (nil on the
// serial path).
func (j *batchJob) add(pos int64, b *decode.Batch, selected bool, win *segment.Window) {
	j.batches = append(j.batches, jobBatch{pos: pos, b: *b, selected: selected})
	j.bytes += int64(len(b.Raw))
	if win != nil && (len(j.wins) == 0 || j.wins[len(j.wins)-1] != win) {
		win.Retain()
		j.wins = append(j.wins, win)
	}
}

// full reports whether the job should go to a worker now.
func (j *batchJob) full() bool {
	if j.crcJob {
		return j.bytes >= crcJobBytes || len(j.batches) >= crcJobBatches
	}
	return j.bytes >= jobMaxBytes || len(j.batches) >= jobMaxBatches
}

// batchRenderer renders batches with one printer and one decoder: the
// real printer on the dump goroutine, or a fork on a worker.
type batchRenderer struct {
	o   *dumpOptions
	p   dumpPrinter
	dec decode.Decoder
	ctl decode.Control
	rv  recordView
	job *batchJob
	cur *jobBatch
	fn  func(*decode.Record) error
	// internal: dump_decoders.go
	internal internalDecoder
}

func newBatchRenderer(o *dumpOptions, p dumpPrinter) *batchRenderer {
	r := &batchRenderer{o: o, p: p}
	r.dec.MaxDecompressed = int(o.maxDecompressed)
	r.dec.Budget = o.budget
	r.fn = r.record
	return r
}

func (r *batchRenderer) report(f finding.Finding) {
	switch f.Severity() {
	case finding.Error:
		r.job.errors++
	case finding.Warning:
		r.job.warnings++
	}
	r.p.Finding(f)
}

// render is everything dump does with each batch of j (see
// dumpState.dumpLog for what it does with the file). It stops at an
// operational error, as the serial loop stops the file there.
func (r *batchRenderer) render(j *batchJob) {
	r.job = j
	if rs, ok := r.p.(jobResetter); ok {
		rs.resetJob()
	}
	// What the decoder holds of the run's budget goes back with the job:
	// an idle renderer holds none.
	defer r.dec.Release()
	for i := range j.batches {
		if r.renderBatch(j, &j.batches[i]); j.err != nil {
			return
		}
	}
}

// decompressBudget is the least budget of decompressed bytes a dump's
// renderers share, whatever the cap (--max-decompressed-bytes; the budget
// is at least the cap, so that a batch at the cap can be decoded).
const decompressBudget = 64 << 20

func (r *batchRenderer) renderBatch(j *batchJob, jb *jobBatch) {
	o := r.o
	b := &jb.b
	jb.view = batchView{File: j.file, Position: jb.pos, Batch: b}
	if !o.noVerifyCRC {
		if !j.crcReady {
			jb.crcValid = b.CRCValid()
		}
		jb.view.CRCValid = &jb.crcValid
		if !jb.crcValid {
			j.crcErrors++
			computed := b.ComputeCRC()
			r.report(fileFinding(finding.CRCMismatch, j.file, jb.pos, b.BaseOffset,
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored %d (0x%08x), computed %d (0x%08x)",
					filepath.Base(j.file), jb.pos, b.BaseOffset, b.CRC, b.CRC, computed, computed)))
		}
	}
	if !jb.selected {
		return
	}
	j.selected++
	bv := &jb.view
	r.p.Batch(bv)
	// Control batches are always decoded (one small uncompressed record),
	// so every output names transaction markers and barriers.
	if o.deep || b.IsControl() {
		r.cur = jb
		if err := r.dec.Records(b, r.fn); err != nil {
			ce, ok := decode.AsCorrupt(err)
			if !ok {
				j.err = err
				return
			}
			ce = ce.At(j.file, jb.pos)
			if ks, ok := r.p.(recordsStopper); ok && o.deep {
				// kafka-dump-log's record iterator throws here and the
				// tool stops (dump_kafka_stop.go).
				j.err = ks.recordsFailed(b, ce)
				return
			}
			r.report(fileFinding(finding.CorruptRecords, ce.Path, ce.Pos, ce.BaseOffset, ce.Error()))
		}
	}
	r.p.EndBatch(bv)
}

func (r *batchRenderer) record(rec *decode.Record) error {
	j, o := r.job, r.o
	if rec.Offset < o.fromOffset || rec.Offset > o.toOffset {
		return nil
	}
	// Records counts what was selected: --offsets cuts inside a batch.
	j.records++
	r.rv = recordView{Record: rec}
	if r.cur.b.IsControl() {
		var err error
		r.ctl, err = decode.ParseControl(rec.Key, rec.Value)
		if err != nil {
			r.rv.ControlErr = err
		} else {
			r.rv.Control = &r.ctl
			j.controls = append(j.controls, r.ctl.Type.String())
		}
	} else {
		r.decodeInternal(j.file, &r.rv)
	}
	if o.deep {
		j.gaps.add(rec.Offset, false)
	}
	r.p.Record(&r.cur.view, &r.rv)
	return nil
}

// commit merges a rendered batch into the file's summary and the run's
// counts, in file order. lastRecord is the offset of the file's last
// record so far (-1 before the first).
func (st *dumpState) commit(j *batchJob, sum *logSummary, lastRecord *int64) {
	st.errors += j.errors
	st.warnings += j.warnings
	sum.CRCErrors += j.crcErrors
	sum.SelectedBatches += j.selected
	sum.Records += j.records
	for _, t := range j.controls {
		sum.ControlByType[t]++
	}
	if g := &j.gaps; g.seen {
		if *lastRecord >= 0 && g.first != *lastRecord+1 {
			sum.NonConsecutive++
		}
		sum.NonConsecutive += g.count
		*lastRecord = g.last
	}
}

// Bounds of the parallel path.
const (
	// jobsPerWorker: batches queued per worker, so a worker never waits
	// for the dump goroutine to frame the next one.
	jobsPerWorker = 8
	// maxInFlightBytes caps the batch bytes in flight (at least one batch
	// is always let through, whatever its size).
	maxInFlightBytes = 32 << 20
	// maxKeptOutput: a job's output buffer above this is not kept for
	// reuse.
	maxKeptOutput = 4 << 20
)

// batchPipeline renders batches on worker goroutines and hands them back
// in order. It lives for one run of dump; only the dump goroutine calls its
// methods.
type batchPipeline struct {
	st      *dumpState
	main    parallelPrinter
	workers int
	work    chan *batchJob
	wg      sync.WaitGroup
	started bool

	queue    []*batchJob // in flight, file order
	inFlight int64       // bytes of the batches in queue
	free     []*batchJob

	// helper renders queued jobs on the dump goroutine (into helpSink)
	// while it waits for the oldest.
	helper   *batchRenderer
	helpSink *batchSink
}

// newBatchPipeline renders with n renderers: n-1 worker goroutines and the
// dump goroutine.
func newBatchPipeline(st *dumpState, main parallelPrinter, n int) *batchPipeline {
	bp := &batchPipeline{st: st, main: main, workers: n - 1, work: make(chan *batchJob, n*jobsPerWorker)}
	bp.helpSink = &batchSink{}
	bp.helper = newBatchRenderer(st.o, main.fork(bp.helpSink))
	return bp
}

func (bp *batchPipeline) start() {
	bp.started = true
	for range bp.workers {
		sink := &batchSink{}
		r := newBatchRenderer(bp.st.o, bp.main.fork(sink))
		bp.wg.Add(1)
		go func() {
			defer bp.wg.Done()
			// A mapped file that shrinks under the dump faults; the job
			// then fails with an error instead of the process dying.
			debug.SetPanicOnFault(true)
			for j := range bp.work {
				sink.b = &j.out
				renderGuarded(r, j)
				j.done <- struct{}{}
			}
		}()
	}
}

// renderGuarded renders j, turning a memory fault into j.err.
func renderGuarded(r *batchRenderer, j *batchJob) { guardFault(j, func() { r.render(j) }) }

// guardFault runs fn on j's batches, turning a memory fault (a mapped
// file truncated under the dump) into j.err; other panics go on.
func guardFault(j *batchJob, fn func()) {
	defer func() {
		if e := recover(); e != nil {
			if err := faultError(e, j.file); err != nil {
				j.err = err
				return
			}
			panic(e)
		}
	}()
	fn()
}

// faultError turns a recovered memory fault (SetPanicOnFault) into an I/O
// error; other panics give nil.
func faultError(e any, file string) error {
	if re, ok := e.(interface{ Addr() uintptr }); ok {
		if err, ok := re.(runtime.Error); ok {
			return fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", file, err)
		}
	}
	return nil
}

// close stops the workers.
func (bp *batchPipeline) close() {
	if bp.started {
		close(bp.work)
		bp.wg.Wait()
	}
}

func (bp *batchPipeline) job() *batchJob {
	if k := len(bp.free); k > 0 {
		j := bp.free[k-1]
		bp.free = bp.free[:k-1]
		return j
	}
	return &batchJob{done: make(chan struct{}, 1)}
}

// submit queues j (whose batches live in the retained windows j.wins),
// first emitting finished jobs to stay within the bounds, then any that
// are done. An error from an emitted job stops the file: the caller passes
// it to drain.
func (bp *batchPipeline) submit(j *batchJob, sum *logSummary, lastRecord *int64) error {
	if !bp.started {
		bp.start()
	}
	size := j.bytes
	for len(bp.queue) > 0 && (len(bp.queue) >= cap(bp.work) || bp.inFlight+size > maxInFlightBytes) {
		if err := bp.emitHead(sum, lastRecord); err != nil {
			bp.recycle(j)
			return err
		}
	}
	bp.queue = append(bp.queue, j)
	bp.inFlight += size
	bp.work <- j // never blocks: the queue is no longer than the channel
	for len(bp.queue) > 0 && len(bp.queue[0].done) > 0 {
		if err := bp.emitHead(sum, lastRecord); err != nil {
			return err
		}
	}
	return nil
}

// emitHead waits for the oldest job, writes its output and commits it.
func (bp *batchPipeline) emitHead(sum *logSummary, lastRecord *int64) error {
	j := bp.pop()
	bp.main.emit(&j.out)
	bp.st.commit(j, sum, lastRecord)
	err := j.err
	bp.recycle(j)
	return err
}

// pop waits for the oldest job and takes it off the queue. While it
// waits, it renders jobs no worker has taken yet. (It runs on the dump
// goroutine, whose SetPanicOnFault is on while a .log is dumped.)
func (bp *batchPipeline) pop() *batchJob {
	j := bp.queue[0]
wait:
	for {
		select {
		case <-j.done:
			break wait
		case h := <-bp.work:
			bp.helpSink.b = &h.out
			renderGuarded(bp.helper, h)
			h.done <- struct{}{}
		}
	}
	bp.queue = bp.queue[1:]
	bp.inFlight -= j.bytes
	return j
}

func (bp *batchPipeline) recycle(j *batchJob) {
	releaseJob(j)
	if cap(j.out.out) > maxKeptOutput {
		j.out.out = nil
	}
	bp.free = append(bp.free, j)
}

func (bp *batchPipeline) drain(sum *logSummary, lastRecord *int64, err error) error {
	return drainQueue(bp, sum, lastRecord, err)
}

func (bp *batchPipeline) pending() int { return len(bp.queue) }

// queuedRunner is what drainQueue needs of a pipeline: its jobs in flight,
// in file order.
type queuedRunner interface {
	pending() int
	pop() *batchJob // waits for the oldest job and takes it off the queue
	emitHead(sum *logSummary, lastRecord *int64) error
	recycle(j *batchJob)
}

// drainQueue empties q at the end of a file. Jobs are emitted in order
// until one fails (or from the start, when err already stopped the file);
// the rest are waited for and thrown away, as the serial path would never
// have rendered them. It returns the first error.
func drainQueue(q queuedRunner, sum *logSummary, lastRecord *int64, err error) error {
	for q.pending() > 0 {
		if err != nil {
			q.recycle(q.pop())
			continue
		}
		err = q.emitHead(sum, lastRecord)
	}
	return err
}

// releaseJob drops the windows j retains and resets it for reuse.
func releaseJob(j *batchJob) {
	for _, w := range j.wins {
		w.Release()
	}
	j.reset()
}

// jobRunner is how dumpLog hands batches to other cores: batchPipeline
// renders whole jobs on workers, crcPipeline (dump_crc.go) only checks
// their CRCs there.
type jobRunner interface {
	job() *batchJob
	submit(j *batchJob, sum *logSummary, lastRecord *int64) error
	drain(sum *logSummary, lastRecord *int64, err error) error
	close()
}

// newDumpState builds the printer and chooses the rendering path, when
// there is more than one core (workers, 0: GOMAXPROCS; the hidden
// --decode-workers sets it): a batch-level dump checks CRCs on workers and
// prints here, whatever the printer; a deep dump renders jobs on workers
// when the printer supports it (table output buffers per file and styled
// terminal output is not worth the trouble: both stay serial).
func newDumpState(s *ui.Streams, o *dumpOptions, workers int) *dumpState {
	return newDumpStateWith(newDumpPrinter(s, o), o, workers, s.Color())
}

// newDumpStateWith is newDumpState with the printer given (kseg check
// hands the engine one that keeps the findings and renders nothing);
// color is whether the output is styled.
func newDumpStateWith(p dumpPrinter, o *dumpOptions, workers int, color bool) *dumpState {
	st := &dumpState{o: o, p: p}
	st.render = newBatchRenderer(o, st.p)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers < 2 {
		return st
	}
	if !o.deep {
		if !o.noVerifyCRC {
			st.pipe = newCRCPipeline(st, workers)
		}
		return st
	}
	if pp, ok := st.p.(parallelPrinter); ok && !color {
		st.pipe = newBatchPipeline(st, pp, workers)
	}
	return st
}

// close stops the workers, if any.
func (st *dumpState) close() {
	if st.pipe != nil {
		st.pipe.close()
	}
}
