// Package groups is kseg groups: the consumer groups of a broker's log
// directories, rebuilt offline from __consumer_offsets as the group
// coordinator loads it (list, describe, members, state, offsets).
package groups

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/psm/cluster"
)

// groupsOptions are the flags of `kseg groups`.
type groupsOptions struct {
	// The view, as kafka-consumer-groups.sh names them: --list, or one of
	// --describe's --offsets (the default), --members and --state.
	list, describe, offsets, members bool
	// state and types are --state[=STATES] and --type[=TYPES]: with --list
	// a STATE (TYPE) column and a filter, as kafka-consumer-groups' --list
	// --state Stable; --state alone is the state view.
	state, types string
	groups       []string
	topics       []string
	output       string
	jobs         int
	// numPartitions is offsets.topic.num.partitions (0: from the image).
	numPartitions int32
}

func (o *groupsOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.BoolVar(&o.list, "list", false, "list the groups: their ids (text), or GROUP TYPE STATE (table)")
	f.BoolVar(&o.describe, "describe", false, "describe the groups (the default): one row per partition, kafka-consumer-groups' --describe columns")
	f.BoolVar(&o.offsets, "offsets", false, "with --describe: the committed offsets and lag (the default view)")
	f.BoolVar(&o.members, "members", false, "with --describe: the members (CONSUMER-ID HOST CLIENT-ID #PARTITIONS; ASSIGNMENT with -v or -o wide)")
	f.StringVar(&o.state, "state", "", "with --describe: the groups' state (COORDINATOR ASSIGNMENT-STRATEGY STATE #MEMBERS); with --list: the STATE column, and --state=STATES lists only groups in these states (comma-separated)")
	f.Lookup("state").NoOptDefVal = "*"
	f.StringVar(&o.types, "type", "", "with --list: the TYPE column; --type=TYPES lists only groups of these types (classic, consumer)")
	f.Lookup("type").NoOptDefVal = "*"
	f.StringArrayVar(&o.groups, "group", nil, "only this group (repeatable)")
	f.StringArrayVar(&o.topics, "topic", nil, "only committed offsets and assignments of this topic (repeatable)")
	ui.AddOutputFlag(c, &o.output)
	f.Int32Var(&o.numPartitions, "consumer-offsets-partitions", 0, "the cluster's offsets.topic.num.partitions, to tell which coordinator partition a --group lives in; 0 = from the KRaft metadata image in the directories, else 50")
	ui.AddJobsFlag(c, &o.jobs, "partitions replayed")
}

func (o *groupsOptions) Validate(_ *cobra.Command, args []string) error {
	if err := brokerview.ValidateView("groups", o.output, args); err != nil {
		return err
	}
	if o.numPartitions < 0 {
		return ui.UsageErrorf("--consumer-offsets-partitions must not be negative")
	}
	return o.validateView()
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &groupsOptions{}
	c := &cobra.Command{
		Use:   "groups LOGDIR...",
		Short: "Consumer groups and committed offsets from __consumer_offsets, offline",
		Long: `Replay every __consumer_offsets partition found in the log directories
into the groups the group coordinator would load (GroupMetadataManager /
GroupCoordinatorShard): each group's type (classic or consumer), state,
protocol, generation, members and their assignments, and its last committed
offset per partition with commit time, metadata and leader epoch. Replay
keeps only the latest value per key, honours tombstones and transactional
offset commits (applied at COMMIT, dropped at ABORT), so memory is bounded by
the live keys, whatever the log's size.

Where a committed partition's log is in the same directories, its log start,
log end, high watermark and last stable offset are rebuilt as replay-psm
does and the lag (high watermark - committed offset, kafka-consumer-groups'
LAG) is shown. A committed offset below the log start offset (retention
deleted what the group had not consumed) or above the log end offset (the
log was truncated after the group consumed it) is an error finding.

When a partition is on several directories (several brokers' disks), the
most complete copy is read. A --group whose coordinator partition
(hash of the group id modulo --consumer-offsets-partitions) is not in the
directories is said to be unanswerable, not absent. Nothing is written.

The views are kafka-consumer-groups.sh's, with its column names:
--describe (the default, or --describe --offsets) has a row per partition a
member is assigned or the group committed (GROUP TOPIC PARTITION
CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID; LOG-END-OFFSET
is the high watermark, as the tool's ListOffsets latest, and LAG is it minus
the committed offset), and a row for a member assigned nothing;
--describe --members a row per member; --describe --state a row per group;
--list the group ids. Text (piped) prints kseg's stable key-value lines,
table (a terminal) the columns; -o wide adds LEADER-EPOCH, COMMIT-TIMESTAMP,
LOG-START-OFFSET and LAST-STABLE-OFFSET to --describe (ASSIGNMENT to
--members, TYPE GENERATION to --state) and shows long ids whole; json writes
every field whichever the view.

Findings (exit 3) are committed offsets outside their log and records or
batches that do not decode.
` + ui.ExitStatusHelp,
		Example: `  kseg groups /var/lib/kafka/data                          # --describe: GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG …
  kseg groups --list --state /var/lib/kafka/data
  kseg groups --describe --members -v --group billing /var/lib/kafka/data
  kseg groups --describe --state /var/lib/kafka/data
  kseg groups --group payments --topic orders broker1/data broker2/data
  kseg groups -o json /var/lib/kafka/data | jq 'select(.type=="group") | .offsets[] | select(.lag > 1000)'`,
		Args: cobra.ArbitraryArgs,
	}
	return brokerview.NewCommand(c, s, o, runGroups)
}

func runGroups(s *ui.Streams, o *groupsOptions, inv *cluster.Inventory) error {
	v, err := cluster.LoadGroups(inv, brokerview.Decoder(), cluster.GroupsOptions{
		Groups: o.groups, Topics: o.topics, Jobs: ui.ResolveJobs(o.jobs), PSM: psm.DefaultOptions(), NumPartitions: o.numPartitions,
	})
	if err != nil {
		return err
	}
	o.filterList(v)
	if err := brokerview.Show(s, o.output, newGroupsPrinter(s, o), v, groupsSummary); err != nil {
		return err
	}
	return brokerview.ViewExit(s, v.Unreadable, len(v.Unanswerable), v.Absent, v.Findings)
}

// groupsSummary is the line after the view.
func groupsSummary(v *cluster.GroupsView) string {
	return fmt.Sprintf("%s replayed, %s", ui.Plural(len(v.Coordinators), "__consumer_offsets partition"), ui.Plural(len(v.Groups), "group"))
}

func newGroupsPrinter(s *ui.Streams, o *groupsOptions) brokerview.Printer[*cluster.GroupsView] {
	table := o.output == "table" || (o.output == "text" && s.OutTTY)
	switch {
	case o.output == "json":
		return &jsonGroupsPrinter{s: s}
	case o.list:
		return &listGroupsPrinter{s: s, o: o, table: table}
	case o.members:
		if table {
			return &tableMembersPrinter{s: s}
		}
		return &textMembersPrinter{s: s}
	case o.state != "":
		if table {
			return &tableStatePrinter{s: s}
		}
		return &textStatePrinter{s: s}
	case table:
		return &tableGroupsPrinter{s: s}
	}
	return &textGroupsPrinter{s: s}
}
