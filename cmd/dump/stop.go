package dump

import (
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/scan"
)

// Where kafka-dump-log stops (segment/scan/dumplog.go says where; the
// kafka printer, segment/dumplog, prints the message as
// DumpLogSegments.mainNoExit prints the exception's). kseg dump then
// exits 3 (the input is corrupt, or not what it names); kseg
// kafka-dump-log exits 1, as Kafka.

// kafkaStopped ends a run that stopped as kafka-dump-log stops: what the
// printer holds is written out, without the end-of-run reports.
func kafkaStopped(p scan.Printer, err error) error {
	if !scan.IsStop(err) {
		return err
	}
	if kp, ok := p.(unitPrinter); ok {
		if cerr := kp.CloseUnit(); cerr != nil {
			return cerr
		}
	}
	return &ui.ExitCodeError{Code: ui.ExitFindings, Err: err, Silent: true}
}
