package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/psm/broker"
)

// groupsOptions are the flags of `kseg groups`.
type groupsOptions struct {
	groups []string
	topics []string
	output string
	jobs   int
	// numPartitions is offsets.topic.num.partitions (0: from the image).
	numPartitions int32
}

func (o *groupsOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringArrayVar(&o.groups, "group", nil, "only this group (repeatable)")
	f.StringArrayVar(&o.topics, "topic", nil, "only committed offsets and assignments of this topic (repeatable)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text|table|json")
	f.Int32Var(&o.numPartitions, "consumer-offsets-partitions", 0, "the cluster's offsets.topic.num.partitions, to tell which coordinator partition a --group lives in; 0 = from the KRaft metadata image in the directories, else 50")
	addJobsFlag(c, &o.jobs, "partitions replayed")
}

func (o *groupsOptions) Validate(args []string) error {
	if err := validateOutput(o.output); err != nil {
		return err
	}
	if len(args) == 0 {
		return usageErrorf("groups needs at least one log directory")
	}
	if o.numPartitions < 0 {
		return usageErrorf("--consumer-offsets-partitions must not be negative")
	}
	return nil
}

func newGroupsCmd(s *Streams, g *globalOptions) *cobra.Command {
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

Findings (exit 3) are committed offsets outside their log and records or
batches that do not decode.
` + exitStatusHelp,
		Example: `  kseg groups /var/lib/kafka/data
  kseg groups --group payments --topic orders broker1/data broker2/data
  kseg groups -o json /var/lib/kafka/data | jq 'select(.type=="group") | .offsets[] | select(.lag > 1000)'`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return runGroups(c.Context(), s, g, o, args)
		},
	}
	o.AddFlags(c)
	return c
}

func runGroups(ctx context.Context, s *Streams, g *globalOptions, o *groupsOptions, args []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	inv, err := openInventory(s, "groups", args)
	if err != nil {
		return err
	}
	// Warnings stay under -q, which silences progress and summaries only.
	warnDiagnostics(s.Err, inv.Warnings)
	v, err := broker.LoadGroups(inv, brokerDecoder(), broker.GroupsOptions{
		Groups: o.groups, Topics: o.topics, Jobs: resolveJobs(o.jobs), PSM: psm.DefaultOptions(), NumPartitions: o.numPartitions,
	})
	if err != nil {
		return err
	}
	if err := newGroupsPrinter(s, o).Print(v); err != nil {
		return err
	}
	if !g.quiet && o.output != "json" {
		fmt.Fprintf(s.Out, "%s replayed, %s\n", plural(len(v.Coordinators), "__consumer_offsets partition"), plural(len(v.Groups), "group"))
	}
	return viewExit(s, v.Unreadable, len(v.Unanswerable), v.Absent, v.Findings)
}

type groupsPrinter interface {
	Print(v *broker.GroupsView) error
}

func newGroupsPrinter(s *Streams, o *groupsOptions) groupsPrinter {
	switch {
	case o.output == "json":
		return &jsonGroupsPrinter{s: s}
	case o.output == "table" || s.OutTTY:
		return &tableGroupsPrinter{s: s}
	}
	return &textGroupsPrinter{s: s}
}
