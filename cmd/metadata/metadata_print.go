package metadata

import (
	"bufio"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/cluster"
)

func int32List(xs []int32) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(int(x))
	}
	return "[" + strings.Join(s, ",") + "]"
}

func endpointsText(es []cluster.Endpoint) string {
	var s []string
	for _, e := range es {
		s = append(s, fmt.Sprintf("%s://%s:%d", ui.Esc(e.Name), ui.Esc(e.Host), e.Port))
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// configResourceType names ConfigResource.Type ids.
func configResourceType(t int8) string {
	switch t {
	case 2:
		return "topic"
	case 4:
		return "broker"
	case 8:
		return "broker-logger"
	case 16:
		return "client-metrics"
	case 32:
		return "group"
	}
	return "type-" + strconv.Itoa(int(t))
}

func imageSource(im *cluster.MetadataImage) string {
	s := "no snapshot"
	if im.Snapshot != "" {
		s = "snapshot " + ui.Esc(filepath.Base(im.Snapshot))
	}
	from := max(im.SnapshotEndOffset, max(im.LogStartOffset, 0))
	if im.Offset <= from {
		return fmt.Sprintf("%s, no log record after it (%d records applied)", s, im.RecordsReplayed)
	}
	return fmt.Sprintf("%s, then log records %d..%d (%d records applied)", s, from, im.Offset-1, im.RecordsReplayed)
}

// textMetadataPrinter prints the image as sections of stable lines,
// kafka-metadata-shell's tree flattened: image, features, brokers,
// controllers, topics with their partitions, configs, quotas, producer
// ids, ACLs, the disk rows that are not ok, then the findings.
type textMetadataPrinter struct{ s *ui.Streams }

// metaText is what the text sections write with.
type metaText struct {
	w  *bufio.Writer
	st *ui.Styles
	ls ui.Lister
}

// h paints a section's word.
func (t *metaText) h(s string) string { return t.st.Paint(t.st.Title, s) }

// gap is a summarised list's "… N more" line, indented.
func (t *metaText) gap(indent string) func(string) {
	return func(more string) { fmt.Fprintf(t.w, "%s%s\n", indent, more) }
}

func (p *textMetadataPrinter) Print(v *cluster.MetadataView) error {
	t := &metaText{w: bufio.NewWriter(p.s.Out), st: p.s.Styles(), ls: p.s.Lister()}
	im := v.Image
	fmt.Fprintf(t.w, "%s %s offset %d: %s\n", t.h("image"), ui.Esc(v.MetadataDir), im.Offset, imageSource(im))
	if im.PendingTransaction > 0 {
		fmt.Fprintf(t.w, "  %d records of an open metadata transaction not applied\n", im.PendingTransaction)
	}
	t.nodes(im)
	t.topics(im)
	t.settings(im)
	t.disk(v.Disk)
	brokerview.PrintFindingsText(t.w, t.st, t.ls, v.Findings)
	brokerview.PrintSkipped(t.w, im.Skipped)
	return t.w.Flush()
}

// nodes are the image's features, brokers and controllers.
func (t *metaText) nodes(im *cluster.MetadataImage) {
	w, h := t.w, t.h
	t.ls.Lines(len(im.Features), "features", func(i int) {
		f := im.Features[i]
		fmt.Fprintf(w, "%s %s level %d\n", h("feature"), ui.Esc(f.Name), f.Level)
	}, t.gap(""))
	t.ls.Lines(len(im.Brokers), "brokers", func(i int) {
		b := im.Brokers[i]
		rack := b.Rack
		if rack == "" {
			rack = "-"
		}
		fmt.Fprintf(w, "%s %d epoch %d incarnationId %s fenced %t inControlledShutdown %t rack %s endpoints %s\n",
			h("broker"), b.ID, b.Epoch, b.IncarnationID, b.Fenced, b.InControlledShutdown, ui.Esc(rack), endpointsText(b.Endpoints))
	}, t.gap(""))
	t.ls.Lines(len(im.Controllers), "controllers", func(i int) {
		c := im.Controllers[i]
		fmt.Fprintf(w, "%s %d incarnationId %s endpoints %s\n", h("controller"), c.ID, c.IncarnationID, endpointsText(c.Endpoints))
	}, t.gap(""))
}

// topics are the image's topics, each with its partitions.
func (t *metaText) topics(im *cluster.MetadataImage) {
	w, ls := t.w, t.ls
	ls.Lines(len(im.Topics), "topics", func(i int) {
		tp := im.Topics[i]
		fmt.Fprintf(w, "%s %s id %s partitions %d\n", t.h("topic"), ui.Esc(tp.Name), tp.ID, len(tp.Partitions))
		ls.Lines(len(tp.Partitions), "partitions of "+ui.Esc(tp.Name), func(i int) {
			pt := tp.Partitions[i]
			fmt.Fprintf(w, "  partition %d replicas %s isr %s leader %d leaderEpoch %d partitionEpoch %d",
				pt.Partition, int32List(pt.Replicas), int32List(pt.ISR), pt.Leader, pt.LeaderEpoch, pt.PartitionEpoch)
			if len(pt.AddingReplicas) > 0 || len(pt.RemovingReplicas) > 0 {
				fmt.Fprintf(w, " adding %s removing %s", int32List(pt.AddingReplicas), int32List(pt.RemovingReplicas))
			}
			if len(pt.ELR) > 0 || len(pt.LastKnownELR) > 0 {
				fmt.Fprintf(w, " elr %s lastKnownElr %s", int32List(pt.ELR), int32List(pt.LastKnownELR))
			}
			if pt.LeaderRecoveryState != 0 {
				fmt.Fprintf(w, " leaderRecoveryState %d", pt.LeaderRecoveryState)
			}
			fmt.Fprintln(w)
		}, t.gap("  "))
	}, t.gap(""))
}

// settings are the image's configs, quotas, producer ids and ACLs.
func (t *metaText) settings(im *cluster.MetadataImage) {
	w, h := t.w, t.h
	t.ls.Lines(len(im.Configs), "configs", func(i int) {
		c := im.Configs[i]
		fmt.Fprintf(w, "%s %s %q %s=%s\n", h("config"), configResourceType(c.ResourceType), c.ResourceName, ui.Esc(c.Name), ui.Esc(c.Value))
	}, t.gap(""))
	t.ls.Lines(len(im.Quotas), "quotas", func(i int) {
		q := im.Quotas[i]
		fmt.Fprintf(w, "%s %s %s=%s\n", h("quota"), ui.Esc(q.Entity), ui.Esc(q.Key), strconv.FormatFloat(q.Value, 'f', -1, 64))
	}, t.gap(""))
	if b := im.ProducerIDs; b != nil {
		if b.BrokerID < 0 {
			// ProducerIdsImage writes its record with broker -1 into a
			// snapshot: no broker owns the last block any more.
			fmt.Fprintf(w, "%s nextProducerId %d\n", h("producerIds"), b.NextProducerID)
		} else {
			fmt.Fprintf(w, "%s nextProducerId %d (last block to broker %d, epoch %d)\n", h("producerIds"), b.NextProducerID, b.BrokerID, b.BrokerEpoch)
		}
	}
	t.ls.Lines(len(im.ACLs), "ACLs", func(i int) {
		a := im.ACLs[i]
		// Kafka's names, as kafka-acls.sh prints them.
		fmt.Fprintf(w, "%s %s resourceType %s resourceName %q patternType %s principal %s host %s operation %s permissionType %s\n",
			h("acl"), a.ID, a.ResourceTypeName(), a.ResourceName, a.PatternTypeName(), ui.Esc(a.Principal), ui.Esc(a.Host), a.OperationName(), a.PermissionTypeName())
	}, t.gap(""))
}

// disk are the rows of the disks' partitions that are not ok.
func (t *metaText) disk(rows []cluster.DiskPartition) {
	var disk []cluster.DiskPartition
	for _, d := range rows {
		if d.Status != "ok" {
			disk = append(disk, d)
		}
	}
	t.ls.Lines(len(disk), "disk rows", func(i int) {
		d := disk[i]
		dir := d.Dir
		if dir == "" {
			dir = "-"
		}
		fmt.Fprintf(t.w, "%s %s-%d node %d %s dir %s diskTopicId %s imageTopicId %s diskLeaderEpoch %d imageLeaderEpoch %d\n",
			t.h("disk"), ui.Esc(d.Topic), d.Partition, d.Node, d.Status, ui.Esc(dir), ui.OrDashString(d.DiskTopicID), ui.OrDashString(d.ImageTopicID), d.DiskLeaderEpoch, d.ImageLeaderEpoch)
	}, t.gap(""))
}

// tableMetadataPrinter prints one row per partition, image and disk side
// by side, then brokers and findings.
type tableMetadataPrinter struct{ s *ui.Streams }

func (p *tableMetadataPrinter) Print(v *cluster.MetadataView) error {
	im := v.Image
	fmt.Fprintf(p.s.Out, "image at offset %d: %s\n", im.Offset, imageSource(im))
	ls := p.s.Lister()
	tw := &ui.TableOut{W: p.s.Out, Width: p.s.Width}
	var rows [][]string
	for _, b := range im.Brokers {
		rows = append(rows, []string{strconv.Itoa(int(b.ID)), ui.I64(b.Epoch), strconv.FormatBool(b.Fenced), strconv.FormatBool(b.InControlledShutdown), ui.OrDashString(b.Rack), endpointsText(b.Endpoints)})
	}
	tw.Render(ls, []string{"broker", "epoch", "fenced", "inControlledShutdown", "rack", "endpoints"}, rows, "brokers")
	disk := map[string][]string{}
	for _, d := range v.Disk {
		k := fmt.Sprintf("%s-%d", d.Topic, d.Partition)
		disk[k] = append(disk[k], fmt.Sprintf("node %d: %s", d.Node, d.Status))
	}
	// Summarised per topic, and topics as a list: every topic shown keeps
	// its first and last partitions.
	gapRow := func(first string) []string {
		return []string{first, "…", "…", "…", "…", "…", "…", "…"}
	}
	var notes []string
	rows = nil
	tc := ls.Cut(len(im.Topics))
	tc.Each(func(i int) {
		t := im.Topics[i]
		pc := ls.Cut(len(t.Partitions))
		pc.Each(func(i int) {
			pt := t.Partitions[i]
			k := fmt.Sprintf("%s-%d", t.Name, pt.Partition)
			rows = append(rows, []string{t.Name, t.ID, strconv.Itoa(int(pt.Partition)), int32List(pt.Replicas), int32List(pt.ISR),
				strconv.Itoa(int(pt.Leader)), strconv.Itoa(int(pt.LeaderEpoch)), ui.OrDashString(strings.Join(disk[k], "; "))})
		}, func() {
			rows = append(rows, gapRow(t.Name))
			notes = append(notes, pc.More("partitions of "+t.Name))
		})
	}, func() {
		rows = append(rows, gapRow("…"))
		notes = append(notes, tc.More("topics"))
	})
	for _, t := range im.Topics {
		for _, pt := range t.Partitions {
			delete(disk, fmt.Sprintf("%s-%d", t.Name, pt.Partition))
		}
	}
	var rest []string
	for k := range disk {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	rc := ls.Cut(len(rest))
	rc.Each(func(i int) {
		k := rest[i]
		rows = append(rows, []string{k, "-", "-", "-", "-", "-", "-", strings.Join(disk[k], "; ")})
	}, func() {
		rows = append(rows, gapRow("…"))
		notes = append(notes, rc.More("partitions on disk only"))
	})
	if len(rows) > 0 {
		ui.RenderTable(p.s.Out, p.s.Width, []string{"topic", "topicId", "partition", "replicas", "isr", "leader", "leaderEpoch", "disk"}, rows)
	}
	for _, n := range notes {
		fmt.Fprintln(p.s.Out, n)
	}
	w := bufio.NewWriter(p.s.Out)
	brokerview.PrintFindingsText(w, p.s.Styles(), ls, v.Findings)
	brokerview.PrintSkipped(w, im.Skipped)
	return w.Flush()
}

// jsonMetadataPrinter writes one {"type":"metadataImage"} object, one
// {"type":"diskPartition"} per disk row and one {"type":"finding"} per
// finding (docs/json.md).
type jsonMetadataPrinter struct {
	s *ui.Streams
	j ui.JSONWriter
}

func jsonEndpoints(j *ui.JSONWriter, es []cluster.Endpoint) {
	ui.Objects(j, "endpoints", es, func(e *cluster.Endpoint) {
		j.Str("name", e.Name)
		j.Str("host", e.Host)
		j.Int("port", int64(e.Port))
		j.Int("securityProtocol", int64(e.SecurityProtocol))
	})
}

func (p *jsonMetadataPrinter) Print(v *cluster.MetadataView) error {
	j := &p.j
	im := v.Image
	j.B = j.B[:0]
	j.BeginLine("metadataImage")
	j.Str("metadataDir", v.MetadataDir)
	j.Int("offset", im.Offset)
	j.Str("snapshot", im.Snapshot)
	j.OptInt("snapshotEndOffset", im.SnapshotEndOffset, im.SnapshotEndOffset >= 0)
	j.OptInt("logStartOffset", im.LogStartOffset, im.LogStartOffset >= 0)
	j.Int("logEndOffset", im.LogEndOffset)
	j.Int("recordsReplayed", im.RecordsReplayed)
	j.Int("pendingTransactionRecords", int64(im.PendingTransaction))
	jsonNodes(j, im)
	jsonTopics(j, im)
	jsonSettings(j, im)
	j.EndLine()
	jsonDisk(j, v.Disk)
	for _, f := range v.Findings {
		brokerview.JSONFinding(j, f)
	}
	_, err := p.s.Out.Write(j.B)
	return err
}

// jsonNodes are the image's features, brokers and controllers.
func jsonNodes(j *ui.JSONWriter, im *cluster.MetadataImage) {
	ui.Objects(j, "features", im.Features, func(f *cluster.Feature) {
		j.Str("name", f.Name)
		j.Int("featureLevel", int64(f.Level))
	})
	ui.Objects(j, "brokers", im.Brokers, func(b *cluster.BrokerRegistration) {
		j.Int("brokerId", int64(b.ID))
		j.Int("brokerEpoch", b.Epoch)
		j.Str("incarnationId", b.IncarnationID)
		j.Str("rack", b.Rack)
		j.Bool("fenced", b.Fenced)
		j.Bool("inControlledShutdown", b.InControlledShutdown)
		j.Bool("isMigratingZkBroker", b.IsMigratingZkBroker)
		jsonEndpoints(j, b.Endpoints)
	})
	ui.Objects(j, "controllers", im.Controllers, func(c *cluster.ControllerRegistration) {
		j.Int("controllerId", int64(c.ID))
		j.Str("incarnationId", c.IncarnationID)
		j.Bool("zkMigrationReady", c.ZkMigrationReady)
		jsonEndpoints(j, c.Endpoints)
	})
}

// jsonTopics are the image's topics, each with its partitions.
func jsonTopics(j *ui.JSONWriter, im *cluster.MetadataImage) {
	ui.Objects(j, "topics", im.Topics, func(t *cluster.TopicImage) {
		j.Str("name", t.Name)
		j.Str("topicId", t.ID)
		ui.Objects(j, "partitions", t.Partitions, func(pt *cluster.PartitionImage) {
			j.Int("partitionId", int64(pt.Partition))
			ui.Ints(j, "replicas", pt.Replicas)
			ui.Ints(j, "isr", pt.ISR)
			ui.Ints(j, "removingReplicas", pt.RemovingReplicas)
			ui.Ints(j, "addingReplicas", pt.AddingReplicas)
			ui.Ints(j, "eligibleLeaderReplicas", pt.ELR)
			ui.Ints(j, "lastKnownElr", pt.LastKnownELR)
			j.Int("leader", int64(pt.Leader))
			j.Int("leaderEpoch", int64(pt.LeaderEpoch))
			j.Int("partitionEpoch", int64(pt.PartitionEpoch))
			j.Int("leaderRecoveryState", int64(pt.LeaderRecoveryState))
		})
	})
}

// jsonSettings are the image's configs, quotas, producer ids and ACLs.
func jsonSettings(j *ui.JSONWriter, im *cluster.MetadataImage) {
	ui.Objects(j, "configs", im.Configs, func(c *cluster.ConfigEntry) {
		j.Int("resourceType", int64(c.ResourceType))
		j.Str("resourceName", c.ResourceName)
		j.Str("name", c.Name)
		j.Str("value", c.Value)
	})
	ui.Objects(j, "clientQuotas", im.Quotas, func(q *cluster.QuotaEntry) {
		j.Str("entity", q.Entity)
		j.Str("key", q.Key)
		j.Raw("value", strconv.AppendFloat(nil, q.Value, 'g', -1, 64))
	})
	if b := im.ProducerIDs; b != nil {
		j.Key("producerIds")
		j.Begin()
		j.Int("brokerId", int64(b.BrokerID))
		j.Int("brokerEpoch", b.BrokerEpoch)
		j.Int("nextProducerId", b.NextProducerID)
		j.End()
	} else {
		j.Null("producerIds")
	}
	ui.Objects(j, "acls", im.ACLs, func(a *cluster.ACL) {
		j.Str("id", a.ID)
		j.Int("resourceType", int64(a.ResourceType))
		j.Str("resourceName", a.ResourceName)
		j.Int("patternType", int64(a.PatternType))
		j.Str("principal", a.Principal)
		j.Str("host", a.Host)
		j.Int("operation", int64(a.Operation))
		j.Int("permissionType", int64(a.PermissionType))
		j.Str("resourceTypeName", a.ResourceTypeName())
		j.Str("patternTypeName", a.PatternTypeName())
		j.Str("operationName", a.OperationName())
		j.Str("permissionTypeName", a.PermissionTypeName())
	})
}

// jsonDisk is one "diskPartition" line per partition on the disks.
func jsonDisk(j *ui.JSONWriter, rows []cluster.DiskPartition) {
	for _, d := range rows {
		j.BeginLine("diskPartition")
		j.Str("topic", d.Topic)
		j.Int("partition", int64(d.Partition))
		j.Int("node", int64(d.Node))
		j.Str("status", d.Status)
		j.Str("partitionDir", d.Dir)
		j.Str("diskTopicId", d.DiskTopicID)
		j.Str("imageTopicId", d.ImageTopicID)
		j.OptInt("diskLeaderEpoch", int64(d.DiskLeaderEpoch), d.DiskLeaderEpoch >= 0)
		j.OptInt("imageLeaderEpoch", int64(d.ImageLeaderEpoch), d.ImageLeaderEpoch >= 0)
		j.EndLine()
	}
}
