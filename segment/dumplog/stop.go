package dumplog

import (
	"fmt"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/scan"
)

// Where kafka-dump-log stops (segment/scan/dumplog.go says where): the
// printer prints the message as DumpLogSegments.mainNoExit prints the
// exception's, and the run ends with a *scan.StopError.

// Stop prints msg as mainNoExit prints the exception's message, after the
// lines printed so far.
func (p *Printer) Stop(msg string) error {
	p.hold = false
	p.w.Flush()
	fmt.Fprintln(p.errw, msg)
	return &scan.StopError{Msg: msg}
}

// RecordsFailed is the kafka printer's account of a batch whose records do
// not decode under deep iteration: DefaultRecordBatch's iterator throws
// there. An uncompressed batch has printed the records before the bad one
// (RecordIterator reads one at a time); a compressed one prints none
// (iterator() decompresses and reads every record first, as
// AbstractLegacyRecordBatch's DeepRecordsIterator does for a wrapper).
func (p *Printer) RecordsFailed(b *decode.Batch, ce *decode.CorruptError) error {
	if p.hold {
		if p.sink != nil {
			p.sink.B.Out = p.sink.B.Out[:p.holdOut]
			p.sink.B.Errs = p.sink.B.Errs[:p.holdErrs]
		} else {
			p.held = p.held[:0]
		}
	}
	msg := ce.Error()
	if !b.IsLegacy() && b.RecordCount < 0 {
		// RecordIterator's constructor.
		msg = fmt.Sprintf("Found invalid record count %d in magic v%d batch", b.RecordCount, b.Magic)
	}
	return p.Stop(msg)
}
