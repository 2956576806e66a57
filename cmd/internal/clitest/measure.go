package clitest

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// What the memory and scale tests of several command packages measure.

// HeapSampler records the peak of runtime.MemStats.HeapInuse while it
// runs.
type HeapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

// StartHeapSampler samples the heap every interval until Stop, which
// returns the peak.
func StartHeapSampler(every time.Duration) *HeapSampler {
	s := &HeapSampler{stop: make(chan struct{})}
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		for {
			p := s.peak.Load()
			if m.HeapInuse <= p || s.peak.CompareAndSwap(p, m.HeapInuse) {
				return
			}
		}
	}
	sample()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return s
}

func (s *HeapSampler) Stop() uint64 {
	close(s.stop)
	s.wg.Wait()
	return s.peak.Load()
}

// RunAllocs is Run with the heap allocations the run made: their number
// (runtime.MemStats.Mallocs) and their bytes (TotalAlloc). The streams are
// made before the count starts.
func RunAllocs(args ...string) (r Result, mallocs, bytes uint64) {
	s, out, errb := ui.TestStreams()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := RunStreams(context.Background(), s, args...)
	runtime.ReadMemStats(&after)
	r = Result{Args: args, Code: code, Stdout: out.String(), Stderr: errb.String()}
	return r, after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc
}

// ProcessCPU is the CPU time (user + system) the process has used.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
