package scan

import (
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/finding"
)

// Renderer renders batches with one printer and one decoder: the run's
// printer on the run's goroutine, or a fork on a worker.
type Renderer struct {
	o   *Options
	p   Printer
	dec decode.Decoder
	ctl decode.Control
	rv  RecordView
	job *batchJob
	cur *jobBatch
	fn  func(*decode.Record) error
	// internal: internal.go
	internal internalDecoder
}

// NewRenderer is a Renderer for runs with the options o (a worker's,
// handed from run to run: UseRenderer).
func NewRenderer(o *Options) *Renderer { return newRenderer(o, nil) }

func newRenderer(o *Options, p Printer) *Renderer {
	r := &Renderer{o: o, p: p}
	r.dec.MaxDecompressed = int(o.MaxDecompressed)
	r.dec.Budget = o.Budget
	r.fn = r.record
	return r
}

func (r *Renderer) report(f finding.Finding) {
	switch f.Severity() {
	case finding.Error:
		r.job.errors++
	case finding.Warning:
		r.job.warnings++
	}
	r.p.Finding(f)
}

// render is everything dump does with each batch of j (see
// Run.dumpLog for what it does with the file). It stops at an
// operational error, as the serial loop stops the file there.
func (r *Renderer) render(j *batchJob) {
	r.job = j
	if rs, ok := r.p.(JobResetter); ok {
		rs.ResetJob()
	}
	// What the decoder holds of the run's budget goes back with the job:
	// an idle renderer holds none.
	defer r.dec.Release()
	for i := range j.batches {
		if r.renderBatch(j, &j.batches[i]); j.err != nil {
			return
		}
	}
}

func (r *Renderer) renderBatch(j *batchJob, jb *jobBatch) {
	o := r.o
	b := &jb.b
	jb.view = BatchView{File: j.file, Position: jb.pos, Batch: b}
	if !o.NoVerifyCRC {
		if !j.crcReady {
			jb.crcValid = b.CRCValid()
		}
		jb.view.CRCValid = &jb.crcValid
		if !jb.crcValid {
			j.crcErrors++
			computed := b.ComputeCRC()
			r.report(fileFinding(finding.CRCMismatch, j.file, jb.pos, b.BaseOffset,
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored %d (0x%08x), computed %d (0x%08x)",
					filepath.Base(j.file), jb.pos, b.BaseOffset, b.CRC, b.CRC, computed, computed)))
		}
	}
	if !jb.selected {
		return
	}
	j.selected++
	bv := &jb.view
	r.p.Batch(bv)
	// Control batches are always decoded (one small uncompressed record),
	// so every output names transaction markers and barriers.
	if o.Deep || b.IsControl() {
		r.cur = jb
		if err := r.dec.Records(b, r.fn); err != nil {
			ce, ok := decode.AsCorrupt(err)
			if !ok {
				j.err = err
				return
			}
			ce = ce.At(j.file, jb.pos)
			if ks, ok := r.p.(RecordsStopper); ok && o.Deep {
				// kafka-dump-log's record iterator throws here and the
				// tool stops (dumplog.go).
				j.err = ks.RecordsFailed(b, ce)
				return
			}
			r.report(fileFinding(finding.CorruptRecords, ce.Path, ce.Pos, ce.BaseOffset, ce.Error()))
		}
	}
	r.p.EndBatch(bv)
}

func (r *Renderer) record(rec *decode.Record) error {
	j, o := r.job, r.o
	if rec.Offset < o.FromOffset || rec.Offset > o.ToOffset {
		return nil
	}
	// Records counts what was selected: --offsets cuts inside a batch.
	j.records++
	r.rv = RecordView{Record: rec}
	if r.cur.b.IsControl() {
		var err error
		r.ctl, err = decode.ParseControl(rec.Key, rec.Value)
		if err != nil {
			r.rv.ControlErr = err
		} else {
			r.rv.Control = &r.ctl
			j.controls = append(j.controls, r.ctl.Type.String())
		}
	} else {
		r.decodeInternal(j.file, &r.rv)
	}
	if o.Deep {
		j.gaps.Add(rec.Offset, false)
	}
	r.p.Record(&r.cur.view, &r.rv)
	return nil
}

// commit merges a rendered batch into the file's summary and the run's
// counts, in file order. lastRecord is the offset of the file's last
// record so far (-1 before the first).
func (st *Run) commit(j *batchJob, sum *LogSummary, lastRecord *int64) {
	st.errors += j.errors
	st.warnings += j.warnings
	sum.CRCErrors += j.crcErrors
	sum.SelectedBatches += j.selected
	sum.Records += j.records
	for _, t := range j.controls {
		sum.ControlByType[t]++
	}
	if g := &j.gaps; g.Seen {
		if *lastRecord >= 0 && g.First != *lastRecord+1 {
			sum.NonConsecutive++
		}
		sum.NonConsecutive += g.Count
		*lastRecord = g.Last
	}
}
