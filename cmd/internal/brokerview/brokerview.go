// Package brokerview is what kseg's whole-broker views (groups, txns,
// metadata, status) share: their log directories opened by the input rule,
// the decoder of internal-topic records, findings in text and JSON, the
// partitions and questions they could not answer, and the exit of a view.
package brokerview

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/segment/finding"
)

// Decoder is the decoder of __consumer_offsets and
// __transaction_state records the views use: kseg's schema tables.
func Decoder() cluster.Decoder { return cluster.SchemaDecoder{} }

// NewCommand is ui.NewCommand for a view of log directories: its run is
// given the inventory of the directories (OpenInventory, in the command's
// name) instead of the arguments.
func NewCommand[O ui.Options](c *cobra.Command, s *ui.Streams, o O, run func(s *ui.Streams, o O, inv *cluster.Inventory) error) *cobra.Command {
	return ui.NewCommand(c, s, o, func(_ context.Context, s *ui.Streams, o O, args []string) error {
		inv, err := OpenInventory(s, c.Name(), args)
		if err != nil {
			return err
		}
		return run(s, o, inv)
	})
}

// OpenInventory is every view's start: it checks every argument by the
// input rule (inputs.go: a log directory), lists them and warns about what
// the listing skipped. A partition directory that cannot be listed is in
// Inventory.Unreadable, for ViewExit.
func OpenInventory(s *ui.Streams, cmd string, args []string) (*cluster.Inventory, error) {
	if err := inputs.CheckAll(s, cmd, args, inputs.LogDir); err != nil {
		return nil, err
	}
	inv, err := cluster.OpenInventory(args)
	if err != nil {
		return nil, inputs.IOError(err)
	}
	// Warnings stay under -q, which silences progress and summaries only.
	ui.WarnDiagnostics(s.Err, inv.Warnings)
	return inv, nil
}

// Printer renders a view (V: the view, as psm/cluster loads it).
type Printer[V any] interface {
	Print(v V) error
}

// PickPrinter is a view's printer for --output: JSON lines with json; the
// table with table, or with text on a terminal; else kseg's stable text
// lines.
func PickPrinter[V any](s *ui.Streams, output string, json, table, text Printer[V]) Printer[V] {
	switch {
	case output == "json":
		return json
	case output == "table" || s.OutTTY:
		return table
	}
	return text
}

// Show prints the view v and, in text and table output and not under -q,
// the summary line after it.
func Show[V any](s *ui.Streams, output string, p Printer[V], v V, summary func(V) string) error {
	if err := p.Print(v); err != nil {
		return err
	}
	if !s.Quiet && output != "json" {
		fmt.Fprintln(s.Out, summary(v))
	}
	return nil
}

// ValidateView is the check every view of log directories (groups, txns,
// metadata) makes first: --output, and at least one directory.
func ValidateView(cmd, output string, args []string) error {
	if err := ui.ValidateOutput(output); err != nil {
		return err
	}
	if len(args) == 0 {
		return ui.UsageErrorf("%s needs at least one log directory", cmd)
	}
	return nil
}

// PrintFindingsText prints findings as dump and replay-psm do:
// SEVERITY kind subject: message; a kind reported many times is
// summarised (lister.byKind).
func PrintFindingsText(w io.Writer, st *ui.Styles, ls ui.Lister, fs []finding.Finding) {
	ls.ByKind(len(fs), func(i int) string { return fs[i].Kind.String() }, func(i int) {
		f := fs[i]
		sev := f.Severity().Upper()
		style := st.Info
		switch f.Severity() {
		case finding.Error:
			style = st.Err
		case finding.Warning:
			style = st.Warn
		}
		// Subject and message name groups, transactional ids and topics:
		// data (esc).
		fmt.Fprintf(w, "%s %s %s: %s\n", st.Paint(style, sev), f.Kind, ui.Esc(f.Subject), ui.Esc(f.Message))
	}, func(more string) { fmt.Fprintln(w, more) })
}

// JSONFinding appends one {"type":"finding"} line.
func JSONFinding(j *ui.JSONWriter, f finding.Finding) {
	j.BeginLine("finding")
	j.Str("severity", f.Severity().String())
	j.Str("kind", f.Kind.String())
	j.Str("subject", f.Subject)
	j.Str("partitionDir", f.PartitionDir)
	j.OptInt("offset", f.Offset, f.Offset >= 0)
	j.Str("message", f.Message)
	j.EndLine()
}

// ViewExit is the exit of a whole-broker view: every partition that could
// not be read is reported on stderr (the view went on without it) and the
// exit is 1, as replay-psm's and dump's of a log directory; otherwise 3
// when a finding is an error.
//
// Between the two, a question the directories cannot answer (unanswered:
// the view's UNANSWERABLE lines, printed with it; absent: what was asked
// for and does not exist, said here) exits 2, as an offset past a log's
// end does: the input given does not hold the answer.
func ViewExit(s *ui.Streams, unread []cluster.Unreadable, unanswered int, absent []string, fs []finding.Finding) error {
	if err := reportUnreadable(s, unread); err != nil {
		return err
	}
	for _, a := range absent {
		fmt.Fprintf(s.Err, "kseg: %s\n", a)
	}
	if n := unanswered + len(absent); n > 0 {
		return ui.Unansweredf("%s these directories cannot answer (exit 2; give the log directories that hold the answer)", ui.Plural(n, "question"))
	}
	return findingsResult(fs)
}

// reportUnreadable prints one "kseg: DIR: …" line per partition that could
// not be read, and returns the exit 1 they make (nil when none).
func reportUnreadable(s *ui.Streams, unread []cluster.Unreadable) error {
	for _, u := range unread {
		msg := u.Err.Error()
		if !strings.Contains(msg, u.Dir) {
			msg = u.Dir + ": " + msg
		}
		fmt.Fprintf(s.Err, "kseg: %s (the view goes on without it)\n", msg)
	}
	if len(unread) > 0 {
		return &ui.ExitCodeError{Code: ui.ExitError, Silent: true}
	}
	return nil
}

// findingsResult is the exit for a view: 3 when a finding is an error.
func findingsResult(fs []finding.Finding) error {
	if finding.HasErrors(fs) {
		return ui.FindingsExit()
	}
	return nil
}

func PartitionsText(ps []cluster.TopicPartitions) string {
	var parts []string
	for _, p := range ps {
		var ns []string
		for _, n := range p.Partitions {
			ns = append(ns, strconv.Itoa(int(n)))
		}
		parts = append(parts, p.Topic+"-"+strings.Join(ns, ","))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func JSONPartitions(j *ui.JSONWriter, k string, ps []cluster.TopicPartitions) {
	ui.Objects(j, k, ps, func(p *cluster.TopicPartitions) {
		j.Str("topic", p.Topic)
		ui.Ints(j, "partitions", p.Partitions)
	})
}

// PrintUnanswerable prints the questions a view's directories cannot
// answer, one UNANSWERABLE line each (groups and txns).
func PrintUnanswerable(w *bufio.Writer, ls ui.Lister, us []string) {
	ls.Lines(len(us), "unanswerable questions", func(i int) { fmt.Fprintf(w, "UNANSWERABLE %s\n", ui.Esc(us[i])) }, func(more string) { fmt.Fprintln(w, more) })
}

// JSONUnanswerable writes one {"type":"unanswerable"} line per question.
func JSONUnanswerable(j *ui.JSONWriter, us []string) {
	for _, u := range us {
		j.BeginLine("unanswerable")
		j.Str("message", u)
		j.EndLine()
	}
}

func PrintSkipped(w *bufio.Writer, sk map[string]int) {
	var keys []string
	for k := range sk {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "NOTE %d records of type %s not interpreted\n", sk[k], k)
	}
}
