package scan

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/kseg/kseg/segment"
)

// Rendering a .log batch by batch, serially or on worker goroutines.
//
// Everything dump does with one batch — CRC check, decompression, record
// decoding, control records, rendering, findings — is Renderer.render,
// and everything that depends on the batches before it (summary counts,
// the non-consecutive offset checks, finding counts) is Run.commit,
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
// serial output (the golden tests, cmd/dump/parallel_test.go and this
// package's tests check both ways). While the oldest job is still being rendered it renders queued
// jobs itself rather than wait: N renderers are N-1 workers plus the dump
// goroutine, one per core, and no core idles while there is work. At most
// N×jobsPerWorker jobs and maxInFlightBytes of batches are in flight:
// memory stays flat whatever the segment size.

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
	st      *Run
	main    Forker
	workers int
	work    chan *batchJob
	wg      sync.WaitGroup
	started bool

	queue    []*batchJob // in flight, file order
	inFlight int64       // bytes of the batches in queue
	free     []*batchJob

	// helper renders queued jobs on the dump goroutine (into helpSink)
	// while it waits for the oldest.
	helper   *Renderer
	helpSink *Sink
}

// newBatchPipeline renders with n renderers: n-1 worker goroutines and the
// dump goroutine.
func newBatchPipeline(st *Run, main Forker, n int) *batchPipeline {
	bp := &batchPipeline{st: st, main: main, workers: n - 1, work: make(chan *batchJob, n*jobsPerWorker)}
	bp.helpSink = &Sink{}
	bp.helper = newRenderer(st.o, main.Fork(bp.helpSink))
	return bp
}

func (bp *batchPipeline) start() {
	bp.started = true
	for range bp.workers {
		sink := &Sink{}
		r := newRenderer(bp.st.o, bp.main.Fork(sink))
		bp.wg.Add(1)
		go func() {
			defer bp.wg.Done()
			// A mapped file that shrinks under the dump faults; the job
			// then fails with an error instead of the process dying.
			debug.SetPanicOnFault(true)
			for j := range bp.work {
				sink.B = &j.out
				renderGuarded(r, j)
				j.done <- struct{}{}
			}
		}()
	}
}

// renderGuarded renders j, turning a memory fault into j.err.
func renderGuarded(r *Renderer, j *batchJob) { guardFault(j, func() { r.render(j) }) }

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
func (bp *batchPipeline) submit(j *batchJob, sum *LogSummary, lastRecord *int64) error {
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
func (bp *batchPipeline) emitHead(sum *LogSummary, lastRecord *int64) error {
	j := bp.pop()
	bp.main.Emit(&j.out)
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
			bp.helpSink.B = &h.out
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
	if cap(j.out.Out) > maxKeptOutput {
		j.out.Out = nil
	}
	bp.free = append(bp.free, j)
}

func (bp *batchPipeline) drain(sum *LogSummary, lastRecord *int64, err error) error {
	return drainQueue(bp, sum, lastRecord, err)
}

func (bp *batchPipeline) pending() int { return len(bp.queue) }

// queuedRunner is what drainQueue needs of a pipeline: its jobs in flight,
// in file order.
type queuedRunner interface {
	pending() int
	pop() *batchJob // waits for the oldest job and takes it off the queue
	emitHead(sum *LogSummary, lastRecord *int64) error
	recycle(j *batchJob)
}

// drainQueue empties q at the end of a file. Jobs are emitted in order
// until one fails (or from the start, when err already stopped the file);
// the rest are waited for and thrown away, as the serial path would never
// have rendered them. It returns the first error.
func drainQueue(q queuedRunner, sum *LogSummary, lastRecord *int64, err error) error {
	for q.pending() > 0 {
		if err != nil {
			q.recycle(q.pop())
			continue
		}
		err = q.emitHead(sum, lastRecord)
	}
	return err
}

// jobRunner is how dumpLog hands batches to other cores: batchPipeline
// renders whole jobs on workers, crcPipeline (crc.go) only checks
// their CRCs there.
type jobRunner interface {
	job() *batchJob
	submit(j *batchJob, sum *LogSummary, lastRecord *int64) error
	drain(sum *LogSummary, lastRecord *int64, err error) error
	close()
}

// NewRun is a run over files with the options o, rendering through p.
// workers says how many goroutines render the batches of one segment (0:
// GOMAXPROCS; 1: serial): with more than one, a batch-level run checks
// CRCs on workers and renders on the caller's goroutine, whatever the
// printer (crc.go); a Deep run renders jobs on workers when the printer is
// a Forker and not styled (styled terminal output is not worth the
// trouble: it stays serial). The run keeps a copy of o, with LogDirs
// and Budget of its own when they are nil. Close stops the workers.
func NewRun(p Printer, o *Options, workers int, styled bool) *Run {
	st := &Run{opts: *o, p: p}
	o = &st.opts
	st.o = o
	if o.LogDirs == nil {
		o.LogDirs = segment.NewLogDirCache()
	}
	if o.Budget == nil {
		o.Budget = NewBudget(o.MaxDecompressed)
	}
	st.render = newRenderer(o, st.p)
	if o.VerifyIndexesInWalk && o.VerifyIndex {
		st.walkVerify = &indexWalk{st: st}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers < 2 {
		return st
	}
	if !o.Deep {
		if !o.NoVerifyCRC {
			st.pipe = newCRCPipeline(st, workers)
		}
		return st
	}
	if pp, ok := st.p.(Forker); ok && !styled {
		st.pipe = newBatchPipeline(st, pp, workers)
	}
	return st
}

// Close stops the workers, if any.
func (st *Run) Close() {
	if st.pipe != nil {
		st.pipe.close()
	}
}
