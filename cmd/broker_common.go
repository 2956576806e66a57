package cmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/segment/finding"
)

// Shared by the whole-broker views (groups, txns): argument checks, the
// decoder of internal-topic records, and finding rendering.

// brokerDecoder is the decoder of __consumer_offsets and
// __transaction_state records the views use: kseg's schema tables.
func brokerDecoder() cluster.Decoder { return cluster.SchemaDecoder{} }

// openInventory checks every argument by the input rule (inputs.go: a
// log directory) and lists them; a partition directory that cannot be
// listed is in Inventory.Unreadable, for viewExit.
func openInventory(s *Streams, cmd string, args []string) (*cluster.Inventory, error) {
	if err := checkInputs(s, cmd, args, inputLogDir); err != nil {
		return nil, err
	}
	inv, err := cluster.OpenInventory(args)
	if err != nil {
		return nil, ioInput(err)
	}
	return inv, nil
}

func validateOutput(o string) error {
	switch o {
	case "text", "table", "json":
		return nil
	}
	return usageErrorf("--output must be text, table or json, not %q", o)
}

// printFindingsText prints findings as dump and replay-psm do:
// SEVERITY kind subject: message; a kind reported many times is
// summarised (lister.byKind).
func printFindingsText(w io.Writer, st *styles, ls lister, fs []finding.Finding) {
	ls.byKind(len(fs), func(i int) string { return fs[i].Kind.String() }, func(i int) {
		f := fs[i]
		sev := f.Severity().Upper()
		style := st.info
		switch f.Severity() {
		case finding.Error:
			style = st.err
		case finding.Warning:
			style = st.warn
		}
		// Subject and message name groups, transactional ids and topics:
		// data (esc).
		fmt.Fprintf(w, "%s %s %s: %s\n", st.paint(style, sev), f.Kind, esc(f.Subject), esc(f.Message))
	}, func(more string) { fmt.Fprintln(w, more) })
}

// jsonFinding appends one {"type":"finding"} line.
func jsonFinding(j *jsonw, f finding.Finding) {
	j.begin()
	j.str("type", "finding")
	j.str("severity", f.Severity().String())
	j.str("kind", f.Kind.String())
	j.str("subject", f.Subject)
	j.str("partitionDir", f.PartitionDir)
	j.optInt("offset", f.Offset, f.Offset >= 0)
	j.str("message", f.Message)
	j.end()
	j.b = append(j.b, '\n')
}

// viewExit is the exit of a whole-broker view: every partition that could
// not be read is reported on stderr (the view went on without it) and the
// exit is 1, as replay-psm's and dump's of a log directory; otherwise 3
// when a finding is an error.
//
// Between the two, a question the directories cannot answer (unanswered:
// the view's UNANSWERABLE lines, printed with it; absent: what was asked
// for and does not exist, said here) exits 2, as an offset past a log's
// end does: the input given does not hold the answer.
func viewExit(s *Streams, unread []cluster.Unreadable, unanswered int, absent []string, fs []finding.Finding) error {
	if err := reportUnreadable(s, unread); err != nil {
		return err
	}
	for _, a := range absent {
		fmt.Fprintf(s.Err, "kseg: %s\n", a)
	}
	if n := unanswered + len(absent); n > 0 {
		return unansweredf("%s these directories cannot answer (exit 2; give the log directories that hold the answer)", plural(n, "question"))
	}
	return findingsResult(fs)
}

// reportUnreadable prints one "kseg: DIR: …" line per partition that could
// not be read, and returns the exit 1 they make (nil when none).
func reportUnreadable(s *Streams, unread []cluster.Unreadable) error {
	for _, u := range unread {
		msg := u.Err.Error()
		if !strings.Contains(msg, u.Dir) {
			msg = u.Dir + ": " + msg
		}
		fmt.Fprintf(s.Err, "kseg: %s (the view goes on without it)\n", msg)
	}
	if len(unread) > 0 {
		return &exitError{code: ExitError, silent: true}
	}
	return nil
}

// findingsResult is the exit for a view: 3 when a finding is an error.
func findingsResult(fs []finding.Finding) error {
	if finding.HasErrors(fs) {
		return findingsExit()
	}
	return nil
}

func fmtTime(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func partitionsText(ps []cluster.TopicPartitions) string {
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

func jsonPartitions(j *jsonw, k string, ps []cluster.TopicPartitions) {
	j.key(k)
	j.b = append(j.b, '[')
	for i, p := range ps {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.begin()
		j.str("topic", p.Topic)
		j.key("partitions")
		j.b = append(j.b, '[')
		for k, n := range p.Partitions {
			if k > 0 {
				j.b = append(j.b, ',')
			}
			j.b = strconv.AppendInt(j.b, int64(n), 10)
		}
		j.b = append(j.b, ']')
		j.end()
	}
	j.b = append(j.b, ']')
	j.first = false
}
