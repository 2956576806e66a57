package scan

import "github.com/kseg/kseg/decode"

// What the engine's tests reach inside a run.

// CRCPipelineWorkers reports whether st checks CRCs on the CRC pipeline
// and sets its worker count (0: every job checked by the run's goroutine).
func (st *Run) CRCPipelineWorkers(n int) bool {
	cp, ok := st.pipe.(*crcPipeline)
	if ok {
		cp.workers = n
	}
	return ok
}

// Serial reports whether st renders every batch on its own goroutine.
func (st *Run) Serial() bool { return st.pipe == nil }

// CheckCRCsGuarded checks the CRC of batch b (of path, at pos) as a
// worker of the CRC pipeline does, and returns the job's error.
func CheckCRCsGuarded(path string, pos int64, b *decode.Batch) error {
	j := &batchJob{file: path, crcJob: true}
	j.add(pos, b, true, nil)
	checkCRCsGuarded(j)
	return j.err
}

// RenderGuarded renders batch b (of path, at pos) with p as a worker of
// the batch pipeline does, and returns the job's error.
func RenderGuarded(o *Options, p Printer, path string, pos int64, b *decode.Batch) error {
	r := newRenderer(o, p)
	j := &batchJob{file: path}
	j.add(pos, b, true, nil)
	renderGuarded(r, j)
	return j.err
}
