package scan

import (
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// Reading a log directory: partitions in parallel, output in order.
//
// The files of one run are cut into units, runs of consecutive files in
// the same directory: one per partition, plus the log directory's own
// checkpoint files. kseg dump reads the units on --jobs workers
// (ui.RunOrdered), each unit with a Run and a printer of its own (its
// batches rendered serially: the parallelism is across partitions), and
// delivers the output exactly as the serial dump would: grouped per
// partition, partitions in the order Collect lists them, every stdout and
// stderr write in its original order. A worker hands its Renderer from
// unit to unit (UseRenderer): one decoder per worker, its buffers and
// codec state reused.
//
// A large partition among small ones (UnitPipelineBytes of segments or
// more) is read through the batch pipeline (pipeline.go, crc.go) rather
// than serially on its worker: otherwise one huge partition in a log
// directory keeps a single core busy long after the small ones are done.
// Its pipeline's goroutines and the other --jobs workers share the cores.

// BigUnitBytes: a unit whose .log files hold this much gets a pipeline of
// its own (two mapped windows: below that, starting workers buys nothing).
// It is DefaultOptions' UnitPipelineBytes.
const BigUnitBytes = 16 << 20

// Units cuts files into runs of consecutive files in the same directory,
// as [start, end) index pairs.
func Units(files []File) [][2]int {
	var units [][2]int
	for i := range files {
		if i > 0 && filepath.Dir(files[i].Path) == filepath.Dir(files[i-1].Path) {
			units[len(units)-1][1] = i + 1
			continue
		}
		units = append(units, [2]int{i, i + 1})
	}
	return units
}

// UnitWorkers is the workers argument of NewRun for a unit of files: 1
// (serial) unless its .log segments hold UnitPipelineBytes or more, then
// DecodeWorkers.
func (o *Options) UnitWorkers(files []File) int {
	if unitLogBytes(files) >= o.UnitPipelineBytes {
		return o.DecodeWorkers // 0: GOMAXPROCS
	}
	return 1
}

// unitLogBytes is the size of the .log segments among files.
func unitLogBytes(files []File) int64 {
	var n int64
	for _, f := range files {
		if f.Info.Kind != segment.KindLog {
			continue
		}
		if st, err := os.Stat(f.Path); err == nil {
			n += st.Size()
		}
	}
	return n
}

// UseRenderer makes the run render batches on its own goroutine with r,
// a Renderer a worker reuses from run to run.
func (st *Run) UseRenderer(r *Renderer) {
	r.o, r.p = st.o, st.p
	r.dec.MaxDecompressed, r.dec.Budget = int(st.o.MaxDecompressed), st.o.Budget
	st.render = r
}
