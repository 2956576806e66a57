package ui

import (
	"io"
	"runtime"
	"sync"

	"github.com/spf13/cobra"
)

// Partition-level parallelism for commands that walk a log directory
// (dump; replay-psm can use the same): --jobs workers take units
// (partitions) in order and each writes to streams of its own, which
// RunOrdered delivers as if the units had run one after the other.
//
// Each unit writes into a slot of orderedOutput. The slot of the oldest
// unfinished unit writes through to the real streams; the others buffer up
// to slotBufferLimit each and outputBufferLimit together, and then wait
// their turn, so memory stays flat and the output is exactly the serial
// one. The second bound matters when the head is a large partition: the
// other workers then finish small unit after small unit behind it, and
// finished units keep their output until the head reaches them (a log
// directory of one big partition and 999 small ones held 385 MiB of
// buffered deep-dump output without it).

// slotBufferLimit is how much a unit that is not at the head of the output
// buffers before it waits; outputBufferLimit how much all such units
// buffer together.
const (
	slotBufferLimit   = 8 << 20
	outputBufferLimit = 16 << 20
)

// AddJobsFlag adds --jobs: how many partitions a command processes at
// once. what says what is done in parallel ("partitions dumped").
func AddJobsFlag(c *cobra.Command, p *int, what string) {
	c.Flags().IntVar(p, "jobs", 0, what+" in parallel; output stays grouped per partition, in order (0 = number of CPUs)")
}

// ResolveJobs is the worker count for --jobs n: n, or the number of CPUs
// for 0.
func ResolveJobs(n int) int {
	if n > 0 {
		return n
	}
	return runtime.NumCPU()
}

// RunOrdered calls fn(w, i, us) for every unit i in [0, n) on min(jobs, n)
// workers, taking units in order. newWorker makes each worker's state (a
// decoder, say), reused from unit to unit. us are s with Out and Err
// replaced by the unit's slot: whatever fn writes there reaches s.Out and
// s.Err in unit order, each stream's writes in the order made. fn must
// not keep us after it returns. runOrdered returns when every unit is done.
func RunOrdered[W any](s *Streams, n, jobs int, newWorker func() W, fn func(w W, i int, us *Streams)) {
	out := newOrderedOutput(s.Out, s.Err, n)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				sl := out.slot(i)
				us := *s
				us.Out, us.Err = sl.writer(false), sl.writer(true)
				fn(w, i, &us)
				sl.finish()
			}
		}()
	}
	wg.Wait()
}

// orderedOutput interleaves the output of units so that it reads as if
// they had run one after the other.
type orderedOutput struct {
	out, err io.Writer
	limit    int // slotBufferLimit
	budget   int // outputBufferLimit

	mu    sync.Mutex
	cond  *sync.Cond
	head  int // the unit whose slot writes through
	slots []*outputSlot
	total int // bytes buffered in all slots
}

// outputSlot is one unit's place in the output.
type outputSlot struct {
	o      *orderedOutput
	i      int
	writes []slotWrite // buffered while not at the head
	size   int
	done   bool
}

type slotWrite struct {
	toErr bool
	b     []byte
}

func newOrderedOutput(out, err io.Writer, n int) *orderedOutput {
	o := &orderedOutput{out: out, err: err, limit: slotBufferLimit, budget: outputBufferLimit, slots: make([]*outputSlot, n)}
	o.cond = sync.NewCond(&o.mu)
	for i := range o.slots {
		o.slots[i] = &outputSlot{o: o, i: i}
	}
	return o
}

func (o *orderedOutput) slot(i int) *outputSlot { return o.slots[i] }

func (o *orderedOutput) stream(toErr bool) io.Writer {
	if toErr {
		return o.err
	}
	return o.out
}

// slotWriter is the stdout or stderr of a unit.
type slotWriter struct {
	s     *outputSlot
	toErr bool
}

func (s *outputSlot) writer(toErr bool) io.Writer { return slotWriter{s, toErr} }

func (w slotWriter) Write(p []byte) (int, error) {
	s, o := w.s, w.s.o
	o.mu.Lock()
	// Wait while this slot or all of them together would pass their
	// bound; an empty slot, or an empty buffer, takes any write. Waiting
	// cannot deadlock: the head's unit is always on some worker, and the
	// head writes through.
	for o.head != s.i && (s.size > 0 && s.size+len(p) > o.limit || o.total > 0 && o.total+len(p) > o.budget) {
		o.cond.Wait()
	}
	if o.head != s.i {
		s.writes = append(s.writes, slotWrite{w.toErr, append([]byte(nil), p...)})
		s.size += len(p)
		o.total += len(p)
		o.mu.Unlock()
		return len(p), nil
	}
	o.mu.Unlock()
	// The head writes through; nobody else writes to the real streams
	// until it finishes.
	return o.stream(w.toErr).Write(p)
}

// Finish marks the slot's unit done and moves the head past every
// finished unit, writing out what they buffered.
func (s *outputSlot) finish() {
	o := s.o
	o.mu.Lock()
	defer o.mu.Unlock()
	s.done = true
	for o.head < len(o.slots) {
		h := o.slots[o.head]
		for _, w := range h.writes {
			o.stream(w.toErr).Write(w.b)
		}
		o.total -= h.size
		h.writes, h.size = nil, 0
		if !h.done {
			break // h now writes through
		}
		o.head++
	}
	o.cond.Broadcast()
}
