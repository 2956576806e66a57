// Package metadata is kseg metadata: the KRaft metadata image of a
// broker's log directories, replayed offline from __cluster_metadata
// (and its ls, cat, find, in kafka-metadata-shell's words).
package metadata

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/segment/finding"
)

// metadataOptions are the flags of `kseg metadata`.
type metadataOptions struct {
	at     int64
	output string
	topics []string
}

func (o *metadataOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.Int64Var(&o.at, "at", -1, "the image before OFFSET (exclusive): every record below it applied; -1 = the log end")
	f.StringArrayVar(&o.topics, "topic", nil, "only this topic in the topics and disk sections (repeatable)")
	ui.AddOutputFlag(c, &o.output)
}

func (o *metadataOptions) Validate(_ *cobra.Command, args []string) error {
	if err := brokerview.ValidateView("metadata", o.output, args); err != nil {
		return err
	}
	if o.at < -1 {
		return ui.UsageErrorf("--at must be an offset (or -1 for the log end)")
	}
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &metadataOptions{}
	c := &cobra.Command{
		Use:   "metadata LOGDIR...",
		Short: "The KRaft metadata image from __cluster_metadata, offline, checked against the disks",
		Long: `Load the newest KRaft snapshot (__cluster_metadata-0/<endOffset>-<epoch>.checkpoint)
at or below --at and replay the __cluster_metadata log after it, as a
broker's MetadataLoader does, into the image kafka-metadata-shell shows:
finalized features, brokers (registration, endpoints, rack, fencing,
controlled shutdown) and controllers, topics with their ids, partitions with
replicas, ISR, leader and leader epoch, dynamic configs, client quotas, the
producer id block, and ACLs. Metadata transactions (KIP-868) are applied at
their end record; one still open at --at is not.

Then compare the image with the partition directories of every log
directory given (meta.properties says which node each belongs to):
  orphan-partition    a directory whose partition.metadata topic id is not in
                      the image (the topic was deleted, or deleted and
                      recreated under the same name with a new id)
  missing-replica     a replica the image assigns to a node whose directories
                      were given, with no directory on them
  leader-epoch-ahead  a leader-epoch-checkpoint whose last epoch is above the
                      image's leader epoch for the partition
With --at before the log end, what the records after --at did to the disk
(a topic created, a replica moved, a leader elected later) is no finding.

The metadata directory is the most complete __cluster_metadata-0 among the
directories given (metadata.log.dir). Nothing is written.

kseg metadata ls, cat and find walk the same image as kafka-metadata-shell's
commands do, with its paths (/image/topics/byName/orders/0): see
kseg metadata ls --help.

Findings (exit 3) are the three above, an image the snapshot and log cannot
complete (segments deleted past the newest snapshot), and records or
batches that do not decode.
` + ui.ExitStatusHelp,
		Example: `  kseg metadata /var/lib/kafka/data
  kseg metadata cat /image/topics/byName/orders/0 /var/lib/kafka/data
  kseg metadata --at 83088 /var/lib/kafka/data          # the image a snapshot at 83088 would hold
  kseg metadata -o json broker1/data broker2/data | jq 'select(.type=="metadataImage") | .topics[].name'`,
		Args: cobra.ArbitraryArgs,
	}
	c.AddCommand(newMetadataShellCmds(s)...)
	return brokerview.NewCommand(c, s, o, runMetadata)
}

func runMetadata(s *ui.Streams, o *metadataOptions, inv *cluster.Inventory) error {
	v, err := cluster.LoadMetadata(inv, cluster.MetadataOptions{At: o.at})
	if errors.Is(err, cluster.ErrNoMetadataLog) {
		// No image to show: these directories cannot answer (exit 2).
		return ui.Unansweredf("%v", err)
	}
	if err != nil {
		return err
	}
	for _, f := range v.Findings {
		if f.Kind == finding.AtBeyondLogEnd {
			// An image at an offset the metadata log does not reach: a
			// usage error, as every offset past a log's end.
			return ui.Unansweredf("--at %d is past the end of the metadata log (%d): the log does not reach it", o.at, v.Image.LogEndOffset)
		}
	}
	var absent []string
	if len(o.topics) > 0 {
		for _, t := range v.MissingTopics(o.topics) {
			absent = append(absent, fmt.Sprintf("topic %q does not exist in the metadata image at offset %d", t, v.Image.Offset))
		}
		v.FilterTopics(o.topics)
	}
	if err := brokerview.Show(s, o.output, newMetadataPrinter(s, o), v, metadataSummary); err != nil {
		return err
	}
	return brokerview.ViewExit(s, v.Unreadable, 0, absent, v.Findings)
}

// metadataSummary is the line after the view.
func metadataSummary(v *cluster.MetadataView) string {
	im := v.Image
	from := "no snapshot"
	if im.Snapshot != "" {
		from = "snapshot at " + ui.I64(im.SnapshotEndOffset)
	}
	return fmt.Sprintf("image at offset %d (%s, %s replayed): %s, %s, %s; %s",
		im.Offset, from, ui.Plural(im.RecordsReplayed, "record"), ui.Plural(len(im.Topics), "topic"), ui.Plural(len(im.Brokers), "broker"),
		ui.Plural(len(im.Controllers), "controller"), ui.Plural(len(v.Findings), "finding"))
}

func newMetadataPrinter(s *ui.Streams, o *metadataOptions) brokerview.Printer[*cluster.MetadataView] {
	return brokerview.PickPrinter[*cluster.MetadataView](s, o.output, &jsonMetadataPrinter{s: s}, &tableMetadataPrinter{s: s}, &textMetadataPrinter{s: s})
}
