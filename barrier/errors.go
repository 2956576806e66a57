package barrier

import (
	"fmt"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// Refusal reasons of an injection, besides the ones every write command
// shares (edit.Refuse*). A *edit.RefusalError carries one; the CLI maps
// every refusal to exit status 4. Nothing in the partition has been touched
// when one is returned.
const (
	// RefuseLegacyFormat: the batch before the cut is a v0/v1 message; the
	// barrier is a v2 control batch and the topic is on a pre-0.11 format.
	RefuseLegacyFormat edit.Reason = "legacy-format"
	// RefuseOpenTransactions: a transaction would still be open at the
	// barrier (barrier.md §10 pitfall 8).
	RefuseOpenTransactions edit.Reason = "open-transactions"
	// RefuseCommittedData: the cut removes committed records (the last
	// stable offset's fixed point reopened transactions committed below
	// the first one) and the operator has not accepted it (--yes).
	RefuseCommittedData edit.Reason = "committed-data"
)

// CorruptTailError reports a log whose end is not what Kafka would keep:
// broker recovery would cut it (segment.Recover) at ValidBytes, for Kind:
// a torn or corrupt tail, a batch that fails its CRC, offsets that go
// backwards, a transaction marker that does not parse.
// InjectOptions.RepairTail makes that cut; without it nothing is done.
// The CLI maps it to exit status 3 (a finding).
type CorruptTailError struct {
	Segment    int64 // base offset of the segment
	Path       string
	ValidBytes int64 // where recovery would truncate the segment
	Kind       segment.CutKind
	Err        *decode.CorruptError
	Message    string // the cut, in an operator's words
}

func (e *CorruptTailError) Error() string {
	return fmt.Sprintf("%s: %s at position %d: %s", e.Path, e.Kind, e.ValidBytes, e.Message)
}

func (e *CorruptTailError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}
