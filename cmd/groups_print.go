package cmd

import (
	"bufio"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/kseg/kseg/psm/cluster"
)

// textGroupsPrinter prints one block per group, stable plain lines for
// scripts: the group line, a line per member, a line per committed
// offset; then the findings.
type textGroupsPrinter struct{ s *Streams }

func (p *textGroupsPrinter) Print(v *cluster.GroupsView) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.styles(), p.s.lister()
	gap := func(indent string) func(string) {
		return func(more string) { fmt.Fprintf(w, "%s%s\n", indent, more) }
	}
	ls.lines(len(v.Groups), "groups", func(i int) {
		g := v.Groups[i]
		printGroupLine(w, st, &g)
		ls.lines(len(g.Members), "members", func(i int) {
			m := g.Members[i]
			fmt.Fprintf(w, "  member %s clientId %s clientHost %s", esc(m.MemberID), esc(m.ClientID), esc(m.ClientHost))
			if m.GroupInstanceID != "" {
				fmt.Fprintf(w, " groupInstanceId %s", esc(m.GroupInstanceID))
			}
			if m.MemberEpoch >= 0 {
				fmt.Fprintf(w, " memberEpoch %d state %s", m.MemberEpoch, esc(m.State))
			}
			if m.SessionTimeoutMs > 0 {
				fmt.Fprintf(w, " sessionTimeoutMs %d", m.SessionTimeoutMs)
			}
			fmt.Fprintf(w, " rebalanceTimeoutMs %d assignment %s\n", m.RebalanceTimeoutMs, esc(partitionsText(m.Assignment)))
		}, gap("  "))
		ls.lines(len(g.Offsets), "committed offsets", func(i int) {
			c := g.Offsets[i]
			fmt.Fprintf(w, "  offset %s-%d committed %d leaderEpoch %d commitTimestamp %s metadata %q",
				esc(c.Topic), c.Partition, c.Offset, c.LeaderEpoch, fmtTime(c.CommitTimestamp), c.Metadata)
			if c.ExpireTimestamp >= 0 {
				fmt.Fprintf(w, " expireTimestamp %s", fmtTime(c.ExpireTimestamp))
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

func printSkipped(w *bufio.Writer, sk map[string]int) {
	var keys []string
	for k := range sk {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "NOTE %d records of type %s not interpreted\n", sk[k], k)
	}
}

// printGroupLine prints a group's line of the text views.
func printGroupLine(w *bufio.Writer, st *styles, g *cluster.Group) {
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
		st.paint(st.title, "group"), esc(g.Group), g.Type, g.State, esc(proto), gen, g.Generation, len(g.Members), esc(filepath.Base(g.Coordinator)))
	if g.Type == "consumer" {
		fmt.Fprintf(w, " assignmentEpoch %d", g.AssignmentEpoch)
	}
	if g.Leader != "" {
		fmt.Fprintf(w, " leader %s", esc(g.Leader))
	}
	if g.StateTimestamp >= 0 {
		fmt.Fprintf(w, " stateTimestamp %s", fmtTime(g.StateTimestamp))
	}
	fmt.Fprintln(w)
}

// tableGroupsPrinter is --describe on a terminal (or -o table):
// kafka-consumer-groups --describe's rows and columns (describeRows), one
// table for all the groups.
type tableGroupsPrinter struct{ s *Streams }

func (p *tableGroupsPrinter) Print(v *cluster.GroupsView) error {
	ls := p.s.lister()
	header, rows := describeRows(v, p.s.wide)
	w := bufio.NewWriter(p.s.Out)
	ls.table(w, p.s.Width, header, rows, "rows")
	return printGroupsTail(w, p.s.styles(), ls, v)
}

// jsonGroupsPrinter writes one {"type":"group"} object per line, then one
// {"type":"finding"} per finding (docs/json.md).
type jsonGroupsPrinter struct {
	s *Streams
	j jsonw
}

func (p *jsonGroupsPrinter) Print(v *cluster.GroupsView) error {
	j := &p.j
	for _, g := range v.Groups {
		j.b = j.b[:0]
		j.begin()
		j.str("type", "group")
		j.str("group", g.Group)
		j.str("groupType", g.Type)
		j.str("state", g.State)
		j.str("protocolType", g.ProtocolType)
		j.str("protocol", g.Protocol)
		j.int("generation", int64(g.Generation))
		if g.Type == "consumer" {
			j.int("assignmentEpoch", int64(g.AssignmentEpoch))
		}
		j.str("leader", g.Leader)
		j.optInt("currentStateTimestamp", g.StateTimestamp, g.StateTimestamp >= 0)
		j.str("coordinatorPartitionDir", g.Coordinator)
		j.optInt("metadataRecordOffset", g.MetadataOffset, g.MetadataOffset >= 0)
		j.key("members")
		j.b = append(j.b, '[')
		for i, m := range g.Members {
			if i > 0 {
				j.b = append(j.b, ',')
			}
			j.begin()
			j.str("memberId", m.MemberID)
			j.str("groupInstanceId", m.GroupInstanceID)
			j.str("clientId", m.ClientID)
			j.str("clientHost", m.ClientHost)
			j.int("sessionTimeoutMs", int64(m.SessionTimeoutMs))
			j.int("rebalanceTimeoutMs", int64(m.RebalanceTimeoutMs))
			j.optInt("memberEpoch", int64(m.MemberEpoch), m.MemberEpoch >= 0)
			j.str("memberState", m.State)
			jsonPartitions(j, "assignment", m.Assignment)
			j.end()
		}
		j.b = append(j.b, ']')
		j.first = false
		j.key("offsets")
		j.b = append(j.b, '[')
		for i, c := range g.Offsets {
			if i > 0 {
				j.b = append(j.b, ',')
			}
			j.begin()
			j.str("topic", c.Topic)
			j.int("partition", int64(c.Partition))
			j.int("committedOffset", c.Offset)
			j.int("committedLeaderEpoch", int64(c.LeaderEpoch))
			j.str("metadata", c.Metadata)
			j.int("commitTimestamp", c.CommitTimestamp)
			j.optInt("expireTimestamp", c.ExpireTimestamp, c.ExpireTimestamp >= 0)
			j.int("recordOffset", c.RecordOffset)
			if l := c.Log; l != nil && l.Err == nil {
				j.str("partitionDir", l.Dir)
				j.int("logStartOffset", l.LogStartOffset)
				j.int("logEndOffset", l.LogEndOffset)
				j.int("highWatermark", l.HighWatermark)
				j.int("lastStableOffset", l.LastStableOffset)
			}
			j.optInt("lag", c.Lag, c.Lag >= 0)
			j.end()
		}
		j.b = append(j.b, ']')
		j.first = false
		j.end()
		j.b = append(j.b, '\n')
		if _, err := p.s.Out.Write(j.b); err != nil {
			return err
		}
	}
	j.b = j.b[:0]
	jsonUnanswerable(j, v.Unanswerable)
	for _, f := range v.Findings {
		jsonFinding(j, f)
	}
	_, err := p.s.Out.Write(j.b)
	return err
}
