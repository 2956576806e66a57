package testkit

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// What the memory tests of decode (a shared Budget) and of the commands
// (dump's memory bound, the corrupt corpus) measure.

// heapInuse is runtime.MemStats.HeapInuse read through runtime/metrics:
// the bytes of live and not yet swept objects plus the free slots of the
// spans that hold them. Reading it does not stop the world, so sampling
// every millisecond does not slow what it measures.
var heapInuse = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}

// HeapInuse is the heap in use now (runtime.MemStats.HeapInuse).
func HeapInuse() uint64 {
	s := make([]metrics.Sample, len(heapInuse))
	for i, n := range heapInuse {
		s[i].Name = n
	}
	metrics.Read(s)
	var v uint64
	for _, x := range s {
		v += x.Value.Uint64()
	}
	return v
}

// HeapSampler records the peak of HeapInuse while it runs.
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
		v := HeapInuse()
		for {
			p := s.peak.Load()
			if v <= p || s.peak.CompareAndSwap(p, v) {
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

// Stop ends the sampling and returns the peak.
func (s *HeapSampler) Stop() uint64 {
	close(s.stop)
	s.wg.Wait()
	return s.peak.Load()
}
