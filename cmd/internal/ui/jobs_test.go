package ui

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestOrderedOutputBudget: units behind a head that is still writing
// buffer at most the budget together (finished ones included), and the
// output is still in unit order.
func TestOrderedOutputBudget(t *testing.T) {
	var out, errb bytes.Buffer
	const units = 30
	o := newOrderedOutput(&out, &errb, units)
	o.limit, o.budget = 1000, 300
	line := strings.Repeat("y", 99) + "\n"
	headWrote := make(chan struct{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the head: writes, then waits while the others pile up
		defer wg.Done()
		s := o.slot(0)
		fmt.Fprint(s.writer(false), "head\n")
		close(headWrote)
		<-release
		fmt.Fprint(s.writer(false), "head end\n")
		s.finish()
	}()
	<-headWrote
	done := make(chan int, units)
	for i := 1; i < units; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := o.slot(i)
			fmt.Fprint(s.writer(false), line)
			s.finish()
			done <- i
		}()
	}
	// Three units of 100 bytes fit the budget; the others wait in Write.
	for range 3 {
		<-done
	}
	o.mu.Lock()
	total := o.total
	o.mu.Unlock()
	if total > o.budget {
		t.Errorf("%d bytes buffered, budget %d", total, o.budget)
	}
	// Give the others every chance to (wrongly) finish.
	for range 1000 {
		runtime.Gosched()
		select {
		case i := <-done:
			t.Fatalf("unit %d finished beyond the budget", i)
		default:
		}
	}
	close(release)
	wg.Wait()
	want := "head\nhead end\n" + strings.Repeat(line, units-1)
	if out.String() != want {
		t.Errorf("stdout:\n got %q\nwant %q", out.String(), want)
	}
}

// TestOrderedOutput: units writing concurrently, some past the buffer
// Limit, come out in unit order with each unit's stdout and stderr writes
// in their own order.
func TestOrderedOutput(t *testing.T) {
	var out, errb bytes.Buffer
	const units = 40
	o := newOrderedOutput(&out, &errb, units)
	o.limit = 64
	var wantOut, wantErr strings.Builder
	for i := range units {
		for k := range 1 + i%7 {
			fmt.Fprintf(&wantOut, "unit %d line %d: %s\n", i, k, strings.Repeat("x", i))
			if k%3 == 2 {
				fmt.Fprintf(&wantErr, "unit %d warning %d\n", i, k)
			}
		}
	}
	var wg sync.WaitGroup
	next := make(chan int, units)
	for i := range units {
		next <- i
	}
	close(next)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := o.slot(i)
				r := rand.New(rand.NewPCG(uint64(i), 0))
				for k := range 1 + i%7 {
					fmt.Fprintf(s.writer(false), "unit %d line %d: %s\n", i, k, strings.Repeat("x", i))
					if k%3 == 2 {
						fmt.Fprintf(s.writer(true), "unit %d warning %d\n", i, k)
					}
					if r.IntN(4) == 0 {
						runtime.Gosched()
					}
				}
				s.finish()
			}
		}()
	}
	wg.Wait()
	if out.String() != wantOut.String() {
		t.Errorf("stdout out of order:\n got %q\nwant %q", out.String(), wantOut.String())
	}
	if errb.String() != wantErr.String() {
		t.Errorf("stderr out of order:\n got %q\nwant %q", errb.String(), wantErr.String())
	}
}
