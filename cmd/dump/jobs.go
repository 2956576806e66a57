package dump

import (
	"context"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/scan"
)

// Dumping a log directory: partitions in parallel, output in order. The
// engine cuts the files into units, one per partition (scan.Units);
// ui.RunOrdered dumps the units on --jobs workers, each with a run and a
// printer of its own, and delivers their output exactly as the serial
// dump would (segment/scan/units.go says how).

// partitionJobs is --jobs, 0 meaning the number of CPUs.
func (o *Options) partitionJobs() int { return ui.ResolveJobs(o.Jobs) }

// unitResult is what dumping one unit leaves for the end of the run:
// its counts and, for the kafka printer, the printer with its run-wide
// reports. Nothing else of the unit is kept.
type unitResult struct {
	errors  int
	printer scan.Printer // only when it has reports to absorb
	ioErr   error
	err     error
	closed  error
}

func runDumpUnits(ctx context.Context, s *ui.Streams, o *Options, files []scan.File, units [][2]int, prog *dumpProgress) error {
	results := make([]unitResult, len(units))
	ui.RunOrdered(s, len(units), o.partitionJobs(),
		// One decoder per worker, its buffers and codec state reused from
		// partition to partition.
		func() *scan.Renderer { return scan.NewRenderer(&o.Options) },
		func(r *scan.Renderer, i int, us *ui.Streams) {
			results[i] = dumpUnit(ctx, us, o, r, files[units[i][0]:units[i][1]], units[i][0], prog)
		})

	// The end of the run, in unit order: counts, and the run-wide reports
	// of the kafka printer (index mismatches, non-consecutive offsets),
	// gathered by a printer on the real streams that prints them at Close.
	final := newDumpPrinter(s, o)
	var ioErr error
	nErrors := 0
	for i := range results {
		r := &results[i]
		if r.err != nil {
			return r.err
		}
		if r.closed != nil {
			return r.closed
		}
		if r.ioErr != nil {
			ioErr = r.ioErr
		}
		nErrors += r.errors
		if m, ok := final.(unitPrinter); ok && r.printer != nil {
			m.Absorb(r.printer)
		}
	}
	if err := final.Close(); err != nil {
		return err
	}
	return dumpExit(ioErr, nErrors)
}

// dumpUnit dumps one unit (files, the first of them number first of the
// run) onto its streams.
func dumpUnit(ctx context.Context, us *ui.Streams, o *Options, rend *scan.Renderer, files []scan.File, first int, prog *dumpProgress) (r unitResult) {
	st := newDumpRun(us, o, o.UnitWorkers(files), prog)
	defer st.Close()
	st.UseRenderer(rend)
	r.ioErr, r.err = st.Files(ctx, files, first)
	r.errors = st.Errors()
	// Flush what the printer buffered while the slot is open; run-wide
	// reports wait for the end of the run (see runDumpUnits).
	if u, ok := st.Printer().(unitPrinter); ok {
		r.closed = u.CloseUnit()
		r.printer = st.Printer()
	} else {
		r.closed = st.Printer().Close()
	}
	return r
}
