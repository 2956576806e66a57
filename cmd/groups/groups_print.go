package groups

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/cluster"
)

// textGroupsPrinter prints one block per group, stable plain lines for
// scripts: the group line, a line per member, a line per committed
// offset; then the findings.
type textGroupsPrinter struct{ s *ui.Streams }

func (p *textGroupsPrinter) Print(v *cluster.GroupsView) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.Styles(), p.s.Lister()
	gap := func(indent string) func(string) {
		return func(more string) { fmt.Fprintf(w, "%s%s\n", indent, more) }
	}
	ls.Lines(len(v.Groups), "groups", func(i int) {
		g := v.Groups[i]
		printGroupLine(w, st, &g)
		ls.Lines(len(g.Members), "members", func(i int) {
			m := g.Members[i]
			fmt.Fprintf(w, "  member %s clientId %s clientHost %s", ui.Esc(m.MemberID), ui.Esc(m.ClientID), ui.Esc(m.ClientHost))
			if m.GroupInstanceID != "" {
				fmt.Fprintf(w, " groupInstanceId %s", ui.Esc(m.GroupInstanceID))
			}
			if m.MemberEpoch >= 0 {
				fmt.Fprintf(w, " memberEpoch %d state %s", m.MemberEpoch, ui.Esc(m.State))
			}
			if m.SessionTimeoutMs > 0 {
				fmt.Fprintf(w, " sessionTimeoutMs %d", m.SessionTimeoutMs)
			}
			fmt.Fprintf(w, " rebalanceTimeoutMs %d assignment %s\n", m.RebalanceTimeoutMs, ui.Esc(brokerview.PartitionsText(m.Assignment)))
		}, gap("  "))
		ls.Lines(len(g.Offsets), "committed offsets", func(i int) {
			c := g.Offsets[i]
			fmt.Fprintf(w, "  offset %s-%d committed %d leaderEpoch %d commitTimestamp %s metadata %q",
				ui.Esc(c.Topic), c.Partition, c.Offset, c.LeaderEpoch, ui.FmtTime(c.CommitTimestamp), c.Metadata)
			if c.ExpireTimestamp >= 0 {
				fmt.Fprintf(w, " expireTimestamp %s", ui.FmtTime(c.ExpireTimestamp))
			}
			fmt.Fprintf(w, " %s\n", logText(c))
		}, gap("  "))
	}, gap(""))
	return printGroupsTail(w, st, ls, v)
}

func logText(c cluster.CommittedOffset) string {
	switch {
	case c.Log == nil:
		return "log not in these directories"
	case c.Log.Err != nil:
		return "log unreadable"
	}
	l := c.Log
	s := fmt.Sprintf("logStartOffset %d logEndOffset %d highWatermark %d lastStableOffset %d", l.LogStartOffset, l.LogEndOffset, l.HighWatermark, l.LastStableOffset)
	if c.Lag >= 0 {
		return s + " lag " + strconv.FormatInt(c.Lag, 10)
	}
	return s + " lag - (outside the log)"
}

// printGroupLine prints a group's line of the text views.
func printGroupLine(w *bufio.Writer, st *ui.Styles, g *cluster.Group) {
	proto := g.ProtocolType
	if g.Protocol != "" {
		proto += "/" + g.Protocol
	}
	if proto == "" {
		proto = "-"
	}
	gen := "generation"
	if g.Type == "consumer" {
		gen = "groupEpoch"
	}
	fmt.Fprintf(w, "%s %s type %s state %s protocol %s %s %d members %d coordinator %s",
		st.Paint(st.Title, "group"), ui.Esc(g.Group), g.Type, g.State, ui.Esc(proto), gen, g.Generation, len(g.Members), ui.Esc(filepath.Base(g.Coordinator)))
	if g.Type == "consumer" {
		fmt.Fprintf(w, " assignmentEpoch %d", g.AssignmentEpoch)
	}
	if g.Leader != "" {
		fmt.Fprintf(w, " leader %s", ui.Esc(g.Leader))
	}
	if g.StateTimestamp >= 0 {
		fmt.Fprintf(w, " stateTimestamp %s", ui.FmtTime(g.StateTimestamp))
	}
	fmt.Fprintln(w)
}

// tableGroupsPrinter is --describe on a terminal (or -o table):
// kafka-consumer-groups --describe's rows and columns (describeRows), one
// table for all the groups.
type tableGroupsPrinter struct{ s *ui.Streams }

func (p *tableGroupsPrinter) Print(v *cluster.GroupsView) error {
	header, rows := describeRows(v, p.s.Wide)
	return printGroupsTable(p.s, v, header, rows, "rows")
}

// jsonGroupsPrinter writes one {"type":"group"} object per line, then one
// {"type":"finding"} per finding (docs/json.md).
type jsonGroupsPrinter struct {
	s *ui.Streams
	j ui.JSONWriter
}

func (p *jsonGroupsPrinter) Print(v *cluster.GroupsView) error {
	j := &p.j
	for _, g := range v.Groups {
		j.B = j.B[:0]
		j.BeginLine("group")
		j.Str("group", g.Group)
		j.Str("groupType", g.Type)
		j.Str("state", g.State)
		j.Str("protocolType", g.ProtocolType)
		j.Str("protocol", g.Protocol)
		j.Int("generation", int64(g.Generation))
		if g.Type == "consumer" {
			j.Int("assignmentEpoch", int64(g.AssignmentEpoch))
		}
		j.Str("leader", g.Leader)
		j.OptInt("currentStateTimestamp", g.StateTimestamp, g.StateTimestamp >= 0)
		j.Str("coordinatorPartitionDir", g.Coordinator)
		j.OptInt("metadataRecordOffset", g.MetadataOffset, g.MetadataOffset >= 0)
		ui.Objects(j, "members", g.Members, func(m *cluster.Member) {
			j.Str("memberId", m.MemberID)
			j.Str("groupInstanceId", m.GroupInstanceID)
			j.Str("clientId", m.ClientID)
			j.Str("clientHost", m.ClientHost)
			j.Int("sessionTimeoutMs", int64(m.SessionTimeoutMs))
			j.Int("rebalanceTimeoutMs", int64(m.RebalanceTimeoutMs))
			j.OptInt("memberEpoch", int64(m.MemberEpoch), m.MemberEpoch >= 0)
			j.Str("memberState", m.State)
			brokerview.JSONPartitions(j, "assignment", m.Assignment)
		})
		ui.Objects(j, "offsets", g.Offsets, func(c *cluster.CommittedOffset) {
			j.Str("topic", c.Topic)
			j.Int("partition", int64(c.Partition))
			j.Int("committedOffset", c.Offset)
			j.Int("committedLeaderEpoch", int64(c.LeaderEpoch))
			j.Str("metadata", c.Metadata)
			j.Int("commitTimestamp", c.CommitTimestamp)
			j.OptInt("expireTimestamp", c.ExpireTimestamp, c.ExpireTimestamp >= 0)
			j.Int("recordOffset", c.RecordOffset)
			if l := c.Log; l != nil && l.Err == nil {
				j.Str("partitionDir", l.Dir)
				j.LogOffsets(l.LogStartOffset, l.LogEndOffset, l.HighWatermark, l.LastStableOffset)
			}
			j.OptInt("lag", c.Lag, c.Lag >= 0)
		})
		j.EndLine()
		if _, err := p.s.Out.Write(j.B); err != nil {
			return err
		}
	}
	j.B = j.B[:0]
	brokerview.JSONUnanswerable(j, v.Unanswerable)
	for _, f := range v.Findings {
		brokerview.JSONFinding(j, f)
	}
	_, err := p.s.Out.Write(j.B)
	return err
}
