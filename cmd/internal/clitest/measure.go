package clitest

import (
	"context"
	"runtime"
	"syscall"
	"time"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// What the memory and scale tests of several command packages measure.

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
