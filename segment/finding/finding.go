// Package finding is kseg's vocabulary for what its commands find: a
// Severity, a Kind (the word a user greps for: crc-mismatch, pid-collision,
// hanging-transaction …) and the one Finding value every command reports.
//
// A Kind has exactly one Severity, everywhere, by construction: kinds are
// minted only here, in the registry (kinds.go), each with its severity, and
// a Finding takes its severity from its kind (Finding.Severity); nothing
// can report a kind with another one. A defect that is an error in one
// place and a warning in another is two kinds, each with its own word.
// docs/troubleshooting.md explains every kind the registry holds (a test
// in cmd reads the registry, so a new kind cannot go undocumented).
//
// # Place in the flow
//
// kseg's packages depend one way: cmd → barrier/{mirror,recovery} → barrier
// → psm → segment/edit → segment → decode. segment is the lowest floor
// that reports findings (where broker recovery cuts a segment, what is
// wrong with an index), so the vocabulary lives under it, and it imports
// nothing of kseg, so that segment and every package above it — psm,
// psm/cluster, barrier and its rooms, cmd — can share it. decode reports
// no findings: it returns *decode.CorruptError, whose class sentinels
// (decode.ErrCRCMismatch …) the floors above classify into kinds, and it
// does not import this package.
package finding

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Severity is how bad a finding is. Only Error changes a command's exit
// status (3, findings); Warning and Info never do. The zero Severity is
// none: the severity of no kind.
type Severity uint8

// Severities, in increasing order.
const (
	Info Severity = iota + 1
	Warning
	Error
)

// String is the severity as JSON and text output spell it: "info",
// "warning", "error" ("" for none).
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return ""
}

// MarshalText writes String, so a Severity in JSON is the word.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Kind is what a finding is about. Its String is the word every output
// (text, table, JSON) prints; its Severity is the registry's. The zero
// Kind is none.
type Kind uint16

// String is the kind's name ("" for none).
func (k Kind) String() string {
	if k >= numKinds {
		return fmt.Sprintf("Kind(%d)", uint16(k))
	}
	return registry[k].name
}

// Severity is the kind's one severity (0 for none).
func (k Kind) Severity() Severity {
	if k >= numKinds {
		return 0
	}
	return registry[k].severity
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if k == 0 || k >= numKinds {
		return nil, fmt.Errorf("finding: no kind %d", uint16(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText reads a kind's name (a journal's plan is read back so).
func (k *Kind) UnmarshalText(b []byte) error {
	v, ok := Lookup(string(b))
	if !ok {
		return fmt.Errorf("finding: unknown kind %q", b)
	}
	*k = v
	return nil
}

// Lookup is the kind named name.
func Lookup(name string) (Kind, bool) {
	for k := Kind(1); k < numKinds; k++ {
		if registry[k].name == name {
			return k, true
		}
	}
	return 0, false
}

// Kinds is every kind of the registry, in its order.
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := Kind(1); k < numKinds; k++ {
		out = append(out, k)
	}
	return out
}

// Finding is one thing a command found. Kind says what it is, and so how
// severe; Message says it in full, with the evidence. The other fields
// locate it, each -1 (or "") when it does not apply; New sets them so,
// and a command fills those its subject has:
//
//	dump                  File, Position, Offset (the batch's baseOffset), To
//	replay-psm            Offset, ProducerID
//	repair                File, Position
//	verify-chain          Offset, ProducerID, File, Position, UpstreamFile, UpstreamPosition
//	groups, txns, metadata Subject, PartitionDir, Offset
type Finding struct {
	Kind    Kind
	Message string
	// Subject names what a whole-broker view's finding is about: a group,
	// a topic-partition, or the internal topic it was read from.
	Subject string
	// PartitionDir is the partition directory the evidence is in.
	PartitionDir string
	// File is the file the evidence is in, Position the byte position in
	// it; To ends the byte range [Position, To) of a skipped-bytes
	// finding.
	File     string
	Position int64
	To       int64
	// Offset is the Kafka offset the finding is at: the baseOffset of the
	// batch for damage in a log, the snapshot's offset for a snapshot, the
	// record's offset in an internal topic.
	Offset     int64
	ProducerID int64
	// UpstreamFile and UpstreamPosition locate the upstream's batch at the
	// same offset, for an edge of a mirror chain.
	UpstreamFile     string
	UpstreamPosition int64
}

// New is a finding of kind k saying message, located nowhere yet.
func New(k Kind, message string) Finding {
	return Finding{Kind: k, Message: message, Position: -1, To: -1, Offset: -1, ProducerID: -1, UpstreamPosition: -1}
}

// Newf is New with a formatted message.
func Newf(k Kind, format string, args ...any) Finding { return New(k, fmt.Sprintf(format, args...)) }

// Severity is the finding's kind's severity.
func (f Finding) Severity() Severity { return f.Kind.Severity() }

// IsError reports a finding of severity Error.
func (f Finding) IsError() bool { return f.Severity() == Error }

// Errors counts the findings of severity Error.
func Errors(fs []Finding) int {
	n := 0
	for i := range fs {
		if fs[i].IsError() {
			n++
		}
	}
	return n
}

// Count counts the findings of severity Error and Warning.
func Count(fs []Finding) (errors, warnings int) {
	for i := range fs {
		switch fs[i].Severity() {
		case Error:
			errors++
		case Warning:
			warnings++
		}
	}
	return errors, warnings
}

// HasErrors reports a finding of severity Error.
func HasErrors(fs []Finding) bool { return Errors(fs) > 0 }

// Upper is the severity in capitals, as text output labels a finding:
// "ERROR", "WARNING", "INFO".
func (s Severity) Upper() string { return strings.ToUpper(s.String()) }

// wire is a Finding as JSON (a journal's plan holds its findings so): the
// fields that apply, and the kind's severity for a human reader. Reading
// ignores the severity, which the kind decides; a field left out reads as
// -1 (or "").
type wire struct {
	Kind             Kind   `json:"kind"`
	Severity         string `json:"severity"`
	Subject          string `json:"subject,omitempty"`
	PartitionDir     string `json:"partitionDir,omitempty"`
	File             string `json:"file,omitempty"`
	Position         *int64 `json:"position,omitempty"`
	To               *int64 `json:"to,omitempty"`
	Offset           *int64 `json:"offset,omitempty"`
	ProducerID       *int64 `json:"producerId,omitempty"`
	UpstreamFile     string `json:"upstreamFile,omitempty"`
	UpstreamPosition *int64 `json:"upstreamPosition,omitempty"`
	Message          string `json:"message"`
}

// MarshalJSON writes the fields that apply.
func (f Finding) MarshalJSON() ([]byte, error) {
	set := func(v int64) *int64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	return json.Marshal(wire{Kind: f.Kind, Severity: f.Severity().String(), Subject: f.Subject, PartitionDir: f.PartitionDir, File: f.File,
		Position: set(f.Position), To: set(f.To), Offset: set(f.Offset), ProducerID: set(f.ProducerID),
		UpstreamFile: f.UpstreamFile, UpstreamPosition: set(f.UpstreamPosition), Message: f.Message})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Finding) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	get := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	*f = Finding{Kind: w.Kind, Message: w.Message, Subject: w.Subject, PartitionDir: w.PartitionDir, File: w.File,
		Position: get(w.Position), To: get(w.To), Offset: get(w.Offset), ProducerID: get(w.ProducerID),
		UpstreamFile: w.UpstreamFile, UpstreamPosition: get(w.UpstreamPosition)}
	return nil
}
