package scan

import (
	"runtime/debug"
	"sync"
)

// The batch-level dump on several cores: CRCs on workers, the rest in
// order on the dump goroutine.
//
// Without --deep, the CRC-32C of every batch is nearly all of a dump's
// work (it reads every byte; framing and printing touch a header and a
// line per batch), so rendering jobs on workers (batchPipeline) would buy
// little and cost a copy of every line. crcPipeline parallelises the CRCs
// alone:
//
//	dump goroutine: frame ──jobs──▶ queue (file order) ◀── worker(s): claim the oldest
//	                                  │                      unclaimed job, check its CRCs
//	       head checked? render it here with the real printer, commit, release
//	       head claimed by a worker? check the youngest unclaimed job meanwhile
//
// Every job is checked exactly once, by whichever goroutine claims it
// first: the workers take jobs from the old end, the dump goroutine, when
// the job it must print next is still being checked, from the young end,
// so the two rarely want the same one and no core idles while a job waits.
// Rendering then runs serially, with the verdicts already in each batch,
// through the same Renderer and printer as a serial dump: the output
// is the serial output by construction, whatever the printer (table and
// styled output included).

// Bounds of a CRC job: large enough that claiming one costs nothing next
// to checking it (~100 µs), small enough that the two ends of the queue
// stay apart.
const (
	crcJobBytes   = 512 << 10
	crcJobBatches = 4096
	// crcJobsInFlight: jobs framed ahead of the printing; with
	// maxInFlightBytes, what bounds the mapped bytes retained.
	crcJobsInFlight = 24
)

// Job states in a crcPipeline.
const (
	crcQueued  = iota // framed, not claimed
	crcClaimed        // being checked
	crcChecked        // every verdict in j.batches
)

type crcPipeline struct {
	st      *Run
	workers int
	started bool

	mu      sync.Mutex
	work    *sync.Cond // a worker waits for a queued job
	checked *sync.Cond // the dump goroutine waits for the head
	queue   []*batchJob
	claim   int // queue[:claim] are claimed or checked, as far as workers know
	closed  bool

	inFlight int64
	free     []*batchJob
	wg       sync.WaitGroup
}

// newCRCPipeline checks CRCs on n-1 worker goroutines and the dump
// goroutine.
func newCRCPipeline(st *Run, n int) *crcPipeline {
	cp := &crcPipeline{st: st, workers: n - 1}
	cp.work = sync.NewCond(&cp.mu)
	cp.checked = sync.NewCond(&cp.mu)
	return cp
}

func (cp *crcPipeline) start() {
	cp.started = true
	for range cp.workers {
		cp.wg.Add(1)
		go cp.worker()
	}
}

func (cp *crcPipeline) worker() {
	defer cp.wg.Done()
	// A mapped file that shrinks under the dump faults; the job then fails
	// with an error instead of the process dying.
	debug.SetPanicOnFault(true)
	cp.mu.Lock()
	for {
		j := cp.claimOldest()
		if j == nil {
			if cp.closed {
				cp.mu.Unlock()
				return
			}
			cp.work.Wait()
			continue
		}
		cp.check(j)
		cp.checked.Signal()
	}
}

// check checks j's CRCs, which the caller has claimed, outside cp.mu
// (held on entry and on return).
func (cp *crcPipeline) check(j *batchJob) {
	cp.mu.Unlock()
	checkCRCsGuarded(j)
	cp.mu.Lock()
	j.crcState = crcChecked
}

// claimOldest claims the oldest queued job (cp.mu held).
func (cp *crcPipeline) claimOldest() *batchJob {
	for ; cp.claim < len(cp.queue); cp.claim++ {
		if j := cp.queue[cp.claim]; j.crcState == crcQueued {
			j.crcState = crcClaimed
			cp.claim++
			return j
		}
	}
	return nil
}

// claimYoungest claims the youngest queued job (cp.mu held).
func (cp *crcPipeline) claimYoungest() *batchJob {
	for i := len(cp.queue) - 1; i >= cp.claim; i-- {
		if j := cp.queue[i]; j.crcState == crcQueued {
			j.crcState = crcClaimed
			return j
		}
	}
	return nil
}

// checkCRCs records every batch's CRC verdict in j.
func checkCRCs(j *batchJob) {
	for i := range j.batches {
		jb := &j.batches[i]
		jb.crcValid = jb.b.CRCValid()
	}
	j.crcReady = true
}

// checkCRCsGuarded is checkCRCs turning a memory fault into j.err.
func checkCRCsGuarded(j *batchJob) { guardFault(j, func() { checkCRCs(j) }) }

func (cp *crcPipeline) job() *batchJob {
	if k := len(cp.free); k > 0 {
		j := cp.free[k-1]
		cp.free = cp.free[:k-1]
		return j
	}
	return &batchJob{crcJob: true}
}

// submit queues j, first printing checked jobs to stay within the bounds,
// then any that are ready. An error from a printed job stops the file:
// the caller passes it to drain.
func (cp *crcPipeline) submit(j *batchJob, sum *LogSummary, lastRecord *int64) error {
	if !cp.started {
		cp.start()
	}
	for len(cp.queue) > 0 && (len(cp.queue) >= crcJobsInFlight || cp.inFlight+j.bytes > maxInFlightBytes) {
		if err := cp.emitHead(sum, lastRecord); err != nil {
			cp.recycle(j)
			return err
		}
	}
	cp.mu.Lock()
	j.crcState = crcQueued
	cp.queue = append(cp.queue, j)
	cp.inFlight += j.bytes
	cp.work.Signal()
	ready := cp.queue[0].crcState == crcChecked
	cp.mu.Unlock()
	for ready {
		if err := cp.emitHead(sum, lastRecord); err != nil {
			return err
		}
		cp.mu.Lock()
		ready = len(cp.queue) > 0 && cp.queue[0].crcState == crcChecked
		cp.mu.Unlock()
	}
	return nil
}

// pop waits for the head's CRCs and takes it off the queue: it checks the
// head itself if no worker has claimed it, and checks the youngest
// unclaimed job while a worker is still on the head.
func (cp *crcPipeline) pop() *batchJob {
	cp.mu.Lock()
	h := cp.queue[0]
	for h.crcState != crcChecked {
		j := h
		if h.crcState != crcQueued {
			j = cp.claimYoungest()
		} else {
			h.crcState = crcClaimed
		}
		if j == nil {
			cp.checked.Wait()
			continue
		}
		// The dump goroutine runs with SetPanicOnFault on while a .log is
		// dumped; a fault here becomes the job's error too.
		cp.check(j)
	}
	cp.queue = cp.queue[1:]
	cp.claim = max(cp.claim-1, 0)
	cp.inFlight -= h.bytes
	cp.mu.Unlock()
	return h
}

// emitHead prints the oldest job and commits it.
func (cp *crcPipeline) emitHead(sum *LogSummary, lastRecord *int64) error {
	j := cp.pop()
	if j.err == nil {
		cp.st.render.render(j)
		cp.st.commit(j, sum, lastRecord)
	}
	err := j.err
	cp.recycle(j)
	return err
}

func (cp *crcPipeline) recycle(j *batchJob) {
	releaseJob(j)
	cp.free = append(cp.free, j)
}

// drain empties the queue at the end of a file (drainQueue). Only the dump
// goroutine changes the queue's length, so reading it unlocked is safe.
func (cp *crcPipeline) drain(sum *LogSummary, lastRecord *int64, err error) error {
	return drainQueue(cp, sum, lastRecord, err)
}

func (cp *crcPipeline) pending() int { return len(cp.queue) }

// close stops the workers.
func (cp *crcPipeline) close() {
	if !cp.started {
		return
	}
	cp.mu.Lock()
	cp.closed = true
	cp.work.Broadcast()
	cp.mu.Unlock()
	cp.wg.Wait()
}
