package groups

import (
	"bufio"
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/segment/finding"
)

// The views of `kseg groups`, as kafka-consumer-groups.sh has them
// (ConsumerGroupCommand: listGroups, printOffsets, printMembers,
// printStates), with its column names, so that an operator reads the
// offline answer as the online one.

// validateView checks that the view flags make one view, as
// ConsumerGroupCommandOptions does ("Option [describe] takes at most one
// of these options: [members], [offsets], [state]").
func (o *groupsOptions) validateView() error {
	sub := 0
	for _, on := range []bool{o.offsets, o.members, o.state != "" && !o.list} {
		if on {
			sub++
		}
	}
	switch {
	case o.list && (o.describe || o.offsets || o.members):
		return ui.UsageErrorf("--list cannot be combined with --describe, --offsets or --members")
	case sub > 1:
		return ui.UsageErrorf("--describe takes at most one of --offsets, --members and --state")
	case o.types != "" && !o.list:
		return ui.UsageErrorf("--type applies to --list")
	case o.state != "" && o.state != "*" && !o.list:
		return ui.UsageErrorf("--state=STATES filters --list; with --describe, --state takes no value")
	}
	return nil
}

// filterList keeps the groups --list --state=STATES / --type=TYPES ask for
// (case-insensitive, comma-separated, as the tool's
// consumerGroupStatesFromString).
func (o *groupsOptions) filterList(v *cluster.GroupsView) {
	if !o.list {
		return
	}
	keep := func(filter, value string) bool {
		if filter == "" || filter == "*" {
			return true
		}
		for _, f := range strings.Split(filter, ",") {
			if strings.EqualFold(strings.TrimSpace(f), value) {
				return true
			}
		}
		return false
	}
	dropped := map[string]bool{}
	v.Groups = slices.DeleteFunc(v.Groups, func(g cluster.Group) bool {
		drop := !keep(o.state, g.State) || !keep(o.types, g.Type)
		dropped[g.Group] = drop
		return drop
	})
	// A group left out takes its findings along, as --group's do.
	v.Findings = slices.DeleteFunc(v.Findings, func(f finding.Finding) bool { return dropped[f.Subject] })
}

// listGroupsPrinter is --list: the ids, one per line, as `--list` prints
// them (a script's input); on a terminal, or with --state or --type, the
// GROUP TYPE STATE table of `--list --type --state`.
type listGroupsPrinter struct {
	s     *ui.Streams
	o     *groupsOptions
	table bool
}

func (p *listGroupsPrinter) Print(v *cluster.GroupsView) error {
	w := bufio.NewWriter(p.s.Out)
	ls := p.s.Lister()
	if !p.table && p.o.state == "" && p.o.types == "" {
		// The ids alone on stdout, a script's input (xargs); what else
		// the view found goes where diagnostics go.
		for _, g := range v.Groups {
			fmt.Fprintln(w, ui.Esc(g.Group))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		ew := bufio.NewWriter(p.s.Err)
		brokerview.PrintUnanswerable(ew, ls, v.Unanswerable)
		brokerview.PrintFindingsText(ew, p.s.Styles(), ls, v.Findings)
		return ew.Flush()
	}
	header := []string{"GROUP"}
	if p.table || p.o.types != "" {
		header = append(header, "TYPE")
	}
	if p.table || p.o.state != "" {
		header = append(header, "STATE")
	}
	rows := make([][]string, len(v.Groups))
	for i, g := range v.Groups {
		rows[i] = []string{g.Group}
		if slices.Contains(header, "TYPE") {
			rows[i] = append(rows[i], g.Type)
		}
		if slices.Contains(header, "STATE") {
			rows[i] = append(rows[i], g.State)
		}
	}
	w.Flush()
	// A list is the answer whole: --list is not summarised.
	ui.RenderTable(w, p.s.Width, header, rows)
	brokerview.PrintUnanswerable(w, ls, v.Unanswerable)
	brokerview.PrintFindingsText(w, p.s.Styles(), ls, v.Findings)
	return w.Flush()
}

// printGroupsTable is a table view: the table fitted to the terminal (a
// long one summarised, its rows counted as what), then the tail.
func printGroupsTable(s *ui.Streams, v *cluster.GroupsView, header []string, rows [][]string, what string) error {
	ls := s.Lister()
	w := bufio.NewWriter(s.Out)
	ls.Table(w, s.Width, header, rows, what)
	return printGroupsTail(w, s.Styles(), ls, v)
}

// printGroupsTail ends every groups view but --list: what cannot be
// answered, the findings and the records not interpreted.
func printGroupsTail(w *bufio.Writer, st *ui.Styles, ls ui.Lister, v *cluster.GroupsView) error {
	brokerview.PrintUnanswerable(w, ls, v.Unanswerable)
	brokerview.PrintFindingsText(w, st, ls, v.Findings)
	brokerview.PrintSkipped(w, v.Skipped)
	return w.Flush()
}

// memberRows are kafka-consumer-groups' --members rows: GROUP CONSUMER-ID
// [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS [ASSIGNMENT].
func memberRows(v *cluster.GroupsView, assignment bool) ([]string, [][]string) {
	instance := false
	for _, g := range v.Groups {
		for _, m := range g.Members {
			instance = instance || m.GroupInstanceID != ""
		}
	}
	header := []string{"GROUP", "CONSUMER-ID"}
	if instance {
		header = append(header, "GROUP-INSTANCE-ID")
	}
	header = append(header, "HOST", "CLIENT-ID", "#PARTITIONS")
	if assignment {
		header = append(header, "ASSIGNMENT")
	}
	var rows [][]string
	for _, g := range v.Groups {
		for _, m := range g.Members {
			row := []string{g.Group, m.MemberID}
			if instance {
				row = append(row, ui.OrDashString(m.GroupInstanceID))
			}
			row = append(row, ui.OrDashString(m.ClientHost), ui.OrDashString(m.ClientID), strconv.Itoa(countPartitions(m.Assignment)))
			if assignment {
				row = append(row, assignmentText(m.Assignment))
			}
			rows = append(rows, row)
		}
	}
	return header, rows
}

// tableMembersPrinter is --describe --members on a terminal (or -o table).
type tableMembersPrinter struct{ s *ui.Streams }

func (p *tableMembersPrinter) Print(v *cluster.GroupsView) error {
	header, rows := memberRows(v, p.s.Wide || p.s.Verbose)
	return printGroupsTable(p.s, v, header, rows, "members")
}

// textMembersPrinter is --describe --members piped: one line per member.
type textMembersPrinter struct{ s *ui.Streams }

func (p *textMembersPrinter) Print(v *cluster.GroupsView) error {
	w := bufio.NewWriter(p.s.Out)
	ls := p.s.Lister()
	type ref struct{ g, m int }
	var all []ref
	for gi, g := range v.Groups {
		for mi := range g.Members {
			all = append(all, ref{gi, mi})
		}
	}
	ls.Lines(len(all), "members", func(i int) {
		g := &v.Groups[all[i].g]
		m := g.Members[all[i].m]
		fmt.Fprintf(w, "member %s group %s clientId %s clientHost %s", ui.Esc(m.MemberID), ui.Esc(g.Group), ui.Esc(m.ClientID), ui.Esc(m.ClientHost))
		if m.GroupInstanceID != "" {
			fmt.Fprintf(w, " groupInstanceId %s", ui.Esc(m.GroupInstanceID))
		}
		fmt.Fprintf(w, " partitions %d assignment %s\n", countPartitions(m.Assignment), ui.Esc(brokerview.PartitionsText(m.Assignment)))
	}, func(more string) { fmt.Fprintln(w, more) })
	return printGroupsTail(w, p.s.Styles(), ls, v)
}

// stateRow is a group's --describe --state row: GROUP COORDINATOR
// ASSIGNMENT-STRATEGY STATE #MEMBERS (offline, the coordinator is the
// __consumer_offsets partition holding the group, not a broker).
func stateRow(g *cluster.Group, wide bool) []string {
	row := []string{g.Group, filepath.Base(g.Coordinator), ui.OrDashString(g.Protocol), g.State, strconv.Itoa(len(g.Members))}
	if wide {
		row = append(row, g.Type, ui.OrDashString(g.ProtocolType), strconv.Itoa(int(g.Generation)), ui.FmtTime(g.StateTimestamp))
	}
	return row
}

// tableStatePrinter is --describe --state on a terminal (or -o table).
type tableStatePrinter struct{ s *ui.Streams }

func (p *tableStatePrinter) Print(v *cluster.GroupsView) error {
	header := []string{"GROUP", "COORDINATOR", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"}
	if p.s.Wide {
		header = append(header, "TYPE", "PROTOCOL-TYPE", "GENERATION", "STATE-TIMESTAMP")
	}
	rows := make([][]string, len(v.Groups))
	for i := range v.Groups {
		rows[i] = stateRow(&v.Groups[i], p.s.Wide)
	}
	return printGroupsTable(p.s, v, header, rows, "groups")
}

// textStatePrinter is --describe --state piped: the group lines of the
// default text view, without their members and offsets.
type textStatePrinter struct{ s *ui.Streams }

func (p *textStatePrinter) Print(v *cluster.GroupsView) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.Styles(), p.s.Lister()
	ls.Lines(len(v.Groups), "groups", func(i int) {
		printGroupLine(w, st, &v.Groups[i])
	}, func(more string) { fmt.Fprintln(w, more) })
	return printGroupsTail(w, st, ls, v)
}

// describeRows are kafka-consumer-groups' --describe rows
// (collectGroupsOffsets): for each member with an assignment, most
// partitions first, a row per assigned partition; then a row per
// committed partition no member is assigned, with "-" for the member. A
// member assigned nothing (the tool leaves it out) and a group with
// neither members nor offsets get a row too, so that nothing the text
// view shows is missing from the table.
func describeRows(v *cluster.GroupsView, wide bool) ([]string, [][]string) {
	header := []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"}
	if wide {
		header = append(header, "STATE", "LEADER-EPOCH", "COMMIT-TIMESTAMP", "LOG-START-OFFSET", "LAST-STABLE-OFFSET")
	}
	var rows [][]string
	for gi := range v.Groups {
		g := &v.Groups[gi]
		committed := make(map[string]*cluster.CommittedOffset, len(g.Offsets))
		for i := range g.Offsets {
			c := &g.Offsets[i]
			committed[c.Topic+"\x00"+strconv.Itoa(int(c.Partition))] = c
		}
		row := func(topic string, partition int32, c *cluster.CommittedOffset, m *cluster.Member) []string {
			r := []string{g.Group, "-", "-", "-", "-", "-", "-", "-", "-"}
			if topic != "" {
				r[1], r[2] = topic, strconv.Itoa(int(partition))
			}
			ext := []string{g.State, "-", "-", "-", "-"}
			if c != nil {
				r[3] = ui.I64(c.Offset)
				ext[1], ext[2] = strconv.Itoa(int(c.LeaderEpoch)), ui.FmtTime(c.CommitTimestamp)
				if l := c.Log; l != nil && l.Err == nil {
					r[4] = ui.I64(l.HighWatermark)
					ext[3], ext[4] = ui.I64(l.LogStartOffset), ui.I64(l.LastStableOffset)
				}
				if c.Lag >= 0 {
					r[5] = ui.I64(c.Lag)
				}
			}
			if m != nil {
				r[6], r[7], r[8] = m.MemberID, ui.OrDashString(m.ClientHost), ui.OrDashString(m.ClientID)
			}
			if wide {
				r = append(r, ext...)
			}
			return r
		}
		members := make([]*cluster.Member, len(g.Members))
		for i := range g.Members {
			members[i] = &g.Members[i]
		}
		// The tool sorts members by the number of partitions assigned,
		// most first (a stable sort keeps the group's member order).
		slices.SortStableFunc(members, func(a, b *cluster.Member) int {
			return cmp.Compare(countPartitions(b.Assignment), countPartitions(a.Assignment))
		})
		assigned := map[string]bool{}
		n := len(rows)
		for _, m := range members {
			if countPartitions(m.Assignment) == 0 {
				continue
			}
			for _, tp := range sortedPartitions(m.Assignment) {
				key := tp.topic + "\x00" + strconv.Itoa(int(tp.partition))
				assigned[key] = true
				rows = append(rows, row(tp.topic, tp.partition, committed[key], m))
			}
		}
		for i := range g.Offsets {
			c := &g.Offsets[i]
			if !assigned[c.Topic+"\x00"+strconv.Itoa(int(c.Partition))] {
				rows = append(rows, row(c.Topic, c.Partition, c, nil))
			}
		}
		for _, m := range members {
			if countPartitions(m.Assignment) == 0 {
				rows = append(rows, row("", 0, nil, m))
			}
		}
		if len(rows) == n {
			rows = append(rows, row("", 0, nil, nil))
		}
	}
	return header, rows
}

type topicPartition struct {
	topic     string
	partition int32
}

func sortedPartitions(ps []cluster.TopicPartitions) []topicPartition {
	var out []topicPartition
	for _, p := range ps {
		for _, n := range p.Partitions {
			out = append(out, topicPartition{p.Topic, n})
		}
	}
	slices.SortFunc(out, func(a, b topicPartition) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	return out
}

func countPartitions(ps []cluster.TopicPartitions) int {
	n := 0
	for _, p := range ps {
		n += len(p.Partitions)
	}
	return n
}

// assignmentText is the ASSIGNMENT column: topic(0,1,2) per topic, as
// kafka-consumer-groups --members --verbose prints it.
func assignmentText(ps []cluster.TopicPartitions) string {
	if countPartitions(ps) == 0 {
		return "-"
	}
	tps := sortedPartitions(ps)
	var parts []string
	for i := 0; i < len(tps); {
		j := i
		var ns []string
		for ; j < len(tps) && tps[j].topic == tps[i].topic; j++ {
			ns = append(ns, strconv.Itoa(int(tps[j].partition)))
		}
		parts = append(parts, tps[i].topic+"("+strings.Join(ns, ",")+")")
		i = j
	}
	return strings.Join(parts, ", ")
}
