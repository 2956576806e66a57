package cmd

import (
	"context"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
)

// Dumping a log directory: partitions in parallel, output in order.
//
// The files of one run are cut into units, runs of consecutive files in
// the same directory: one per partition, plus the log directory's own
// checkpoint files. runOrdered (jobs.go) dumps the units on --jobs
// workers, each unit with a printer of its own (its batches rendered
// serially: the parallelism is across partitions), and delivers the output
// exactly as the serial dump would: grouped per partition, partitions in
// the order collectDumpFiles lists them, every stdout and stderr write in
// its original order.
//
// A large partition among small ones (bigUnitBytes of segments or more)
// is dumped through the batch pipeline (dump_pipeline.go, dump_crc.go)
// rather than serially on its worker: otherwise one huge partition in a log
// directory keeps a single core busy long after the small ones are done.
// Its pipeline's goroutines and the other --jobs workers share the cores.

// bigUnitBytes: a unit whose .log files hold this much gets a pipeline of
// its own (two mapped windows: below that, starting workers buys nothing).
// The hidden --unit-pipeline-bytes changes it, for tests.
const bigUnitBytes = 16 << 20

// partitionJobs is --jobs, 0 meaning the number of CPUs.
func (o *dumpOptions) partitionJobs() int { return ui.ResolveJobs(o.jobs) }

// dumpUnits cuts files into runs of consecutive files in the same
// directory, as [start, end) index pairs.
func dumpUnits(files []dumpFile) [][2]int {
	var units [][2]int
	for i := range files {
		if i > 0 && filepath.Dir(files[i].path) == filepath.Dir(files[i-1].path) {
			units[len(units)-1][1] = i + 1
			continue
		}
		units = append(units, [2]int{i, i + 1})
	}
	return units
}

// unitResult is what dumping one unit leaves for the end of the run:
// its counts and, for the kafka printer, the printer with its run-wide
// reports. Nothing else of the unit is kept.
type unitResult struct {
	errors  int
	printer dumpPrinter // only when it has reports to absorb
	ioErr   error
	err     error
	closed  error
}

func runDumpUnits(ctx context.Context, s *ui.Streams, o *dumpOptions, files []dumpFile, units [][2]int, prog *dumpProgress) error {
	results := make([]unitResult, len(units))
	ui.RunOrdered(s, len(units), o.partitionJobs(),
		// One decoder per worker, its buffers and codec state reused from
		// partition to partition.
		func() *batchRenderer { return newBatchRenderer(o, nil) },
		func(r *batchRenderer, i int, us *ui.Streams) {
			results[i] = dumpUnit(ctx, us, o, r, files, units[i], prog)
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
			m.absorb(r.printer)
		}
	}
	if err := final.Close(); err != nil {
		return err
	}
	return dumpExit(ioErr, nErrors)
}

// unitLogBytes is the size of the .log segments among files.
func unitLogBytes(files []dumpFile) int64 {
	var n int64
	for _, f := range files {
		if f.info.Kind != segment.KindLog {
			continue
		}
		if st, err := os.Stat(f.path); err == nil {
			n += st.Size()
		}
	}
	return n
}

// dumpUnit dumps one unit onto its streams.
func dumpUnit(ctx context.Context, us *ui.Streams, o *dumpOptions, rend *batchRenderer, files []dumpFile, u [2]int, prog *dumpProgress) (r unitResult) {
	workers := 1
	if unitLogBytes(files[u[0]:u[1]]) >= o.unitPipeline {
		workers = o.decodeWorkers // 0: GOMAXPROCS
	}
	st := newDumpState(us, o, workers)
	defer st.close()
	rend.p = st.p
	st.render = rend
	r.ioErr, r.err = st.dumpFiles(ctx, us.Err, files[u[0]:u[1]], u[0], prog)
	r.errors = st.errors
	// Flush what the printer buffered while the slot is open; run-wide
	// reports wait for the end of the run (see runDumpUnits).
	if u, ok := st.p.(unitPrinter); ok {
		r.closed = u.closeUnit()
		r.printer = st.p
	} else {
		r.closed = st.p.Close()
	}
	return r
}
