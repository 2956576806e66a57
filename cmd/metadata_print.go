package cmd

import (
	"bufio"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
		s = append(s, fmt.Sprintf("%s://%s:%d", esc(e.Name), esc(e.Host), e.Port))
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
		s = "snapshot " + esc(filepath.Base(im.Snapshot))
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
type textMetadataPrinter struct{ s *Streams }

func (p *textMetadataPrinter) Print(v *cluster.MetadataView) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.styles(), p.s.lister()
	im := v.Image
	h := func(s string) string { return st.paint(st.title, s) }
	gap := func(indent string) func(string) {
		return func(more string) { fmt.Fprintf(w, "%s%s\n", indent, more) }
	}
	fmt.Fprintf(w, "%s %s offset %d: %s\n", h("image"), esc(v.MetadataDir), im.Offset, imageSource(im))
	if im.PendingTransaction > 0 {
		fmt.Fprintf(w, "  %d records of an open metadata transaction not applied\n", im.PendingTransaction)
	}
	ls.lines(len(im.Features), "features", func(i int) {
		f := im.Features[i]
		fmt.Fprintf(w, "%s %s level %d\n", h("feature"), esc(f.Name), f.Level)
	}, gap(""))
	ls.lines(len(im.Brokers), "brokers", func(i int) {
		b := im.Brokers[i]
		rack := b.Rack
		if rack == "" {
			rack = "-"
		}
		fmt.Fprintf(w, "%s %d epoch %d incarnationId %s fenced %t inControlledShutdown %t rack %s endpoints %s\n",
			h("broker"), b.ID, b.Epoch, b.IncarnationID, b.Fenced, b.InControlledShutdown, esc(rack), endpointsText(b.Endpoints))
	}, gap(""))
	ls.lines(len(im.Controllers), "controllers", func(i int) {
		c := im.Controllers[i]
		fmt.Fprintf(w, "%s %d incarnationId %s endpoints %s\n", h("controller"), c.ID, c.IncarnationID, endpointsText(c.Endpoints))
	}, gap(""))
	ls.lines(len(im.Topics), "topics", func(i int) {
		t := im.Topics[i]
		fmt.Fprintf(w, "%s %s id %s partitions %d\n", h("topic"), esc(t.Name), t.ID, len(t.Partitions))
		ls.lines(len(t.Partitions), "partitions of "+esc(t.Name), func(i int) {
			pt := t.Partitions[i]
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
		}, gap("  "))
	}, gap(""))
	ls.lines(len(im.Configs), "configs", func(i int) {
		c := im.Configs[i]
		fmt.Fprintf(w, "%s %s %q %s=%s\n", h("config"), configResourceType(c.ResourceType), c.ResourceName, esc(c.Name), esc(c.Value))
	}, gap(""))
	ls.lines(len(im.Quotas), "quotas", func(i int) {
		q := im.Quotas[i]
		fmt.Fprintf(w, "%s %s %s=%s\n", h("quota"), esc(q.Entity), esc(q.Key), strconv.FormatFloat(q.Value, 'f', -1, 64))
	}, gap(""))
	if b := im.ProducerIDs; b != nil {
		if b.BrokerID < 0 {
			// ProducerIdsImage writes its record with broker -1 into a
			// snapshot: no broker owns the last block any more.
			fmt.Fprintf(w, "%s nextProducerId %d\n", h("producerIds"), b.NextProducerID)
		} else {
			fmt.Fprintf(w, "%s nextProducerId %d (last block to broker %d, epoch %d)\n", h("producerIds"), b.NextProducerID, b.BrokerID, b.BrokerEpoch)
		}
	}
	ls.lines(len(im.ACLs), "ACLs", func(i int) {
		a := im.ACLs[i]
		// Kafka's names, as kafka-acls.sh prints them.
		fmt.Fprintf(w, "%s %s resourceType %s resourceName %q patternType %s principal %s host %s operation %s permissionType %s\n",
			h("acl"), a.ID, a.ResourceTypeName(), a.ResourceName, a.PatternTypeName(), esc(a.Principal), esc(a.Host), a.OperationName(), a.PermissionTypeName())
	}, gap(""))
	var disk []cluster.DiskPartition
	for _, d := range v.Disk {
		if d.Status != "ok" {
			disk = append(disk, d)
		}
	}
	ls.lines(len(disk), "disk rows", func(i int) {
		d := disk[i]
		dir := d.Dir
		if dir == "" {
			dir = "-"
		}
		fmt.Fprintf(w, "%s %s-%d node %d %s dir %s diskTopicId %s imageTopicId %s diskLeaderEpoch %d imageLeaderEpoch %d\n",
			h("disk"), esc(d.Topic), d.Partition, d.Node, d.Status, esc(dir), orDashS(d.DiskTopicID), orDashS(d.ImageTopicID), d.DiskLeaderEpoch, d.ImageLeaderEpoch)
	}, gap(""))
	printFindingsText(w, st, ls, v.Findings)
	printSkipped(w, im.Skipped)
	return w.Flush()
}

func orDashS(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// tableMetadataPrinter prints one row per partition, image and disk side
// by side, then brokers and findings.
type tableMetadataPrinter struct{ s *Streams }

func (p *tableMetadataPrinter) Print(v *cluster.MetadataView) error {
	im := v.Image
	fmt.Fprintf(p.s.Out, "image at offset %d: %s\n", im.Offset, imageSource(im))
	ls := p.s.lister()
	tw := &tableOut{w: p.s.Out, width: p.s.Width}
	var rows [][]string
	for _, b := range im.Brokers {
		rows = append(rows, []string{strconv.Itoa(int(b.ID)), i64(b.Epoch), strconv.FormatBool(b.Fenced), strconv.FormatBool(b.InControlledShutdown), orDashS(b.Rack), endpointsText(b.Endpoints)})
	}
	tw.render(ls, []string{"broker", "epoch", "fenced", "inControlledShutdown", "rack", "endpoints"}, rows, "brokers")
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
	tc := ls.cut(len(im.Topics))
	tc.each(func(i int) {
		t := im.Topics[i]
		pc := ls.cut(len(t.Partitions))
		pc.each(func(i int) {
			pt := t.Partitions[i]
			k := fmt.Sprintf("%s-%d", t.Name, pt.Partition)
			rows = append(rows, []string{t.Name, t.ID, strconv.Itoa(int(pt.Partition)), int32List(pt.Replicas), int32List(pt.ISR),
				strconv.Itoa(int(pt.Leader)), strconv.Itoa(int(pt.LeaderEpoch)), orDashS(strings.Join(disk[k], "; "))})
		}, func() {
			rows = append(rows, gapRow(t.Name))
			notes = append(notes, pc.more("partitions of "+t.Name))
		})
	}, func() {
		rows = append(rows, gapRow("…"))
		notes = append(notes, tc.more("topics"))
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
	rc := ls.cut(len(rest))
	rc.each(func(i int) {
		k := rest[i]
		rows = append(rows, []string{k, "-", "-", "-", "-", "-", "-", strings.Join(disk[k], "; ")})
	}, func() {
		rows = append(rows, gapRow("…"))
		notes = append(notes, rc.more("partitions on disk only"))
	})
	if len(rows) > 0 {
		renderTable(p.s.Out, p.s.Width, []string{"topic", "topicId", "partition", "replicas", "isr", "leader", "leaderEpoch", "disk"}, rows)
	}
	for _, n := range notes {
		fmt.Fprintln(p.s.Out, n)
	}
	w := bufio.NewWriter(p.s.Out)
	printFindingsText(w, p.s.styles(), ls, v.Findings)
	printSkipped(w, im.Skipped)
	return w.Flush()
}

// jsonMetadataPrinter writes one {"type":"metadataImage"} object, one
// {"type":"diskPartition"} per disk row and one {"type":"finding"} per
// finding (docs/json.md).
type jsonMetadataPrinter struct {
	s *Streams
	j jsonw
}

func jsonInt32s(j *jsonw, k string, xs []int32) {
	j.key(k)
	j.b = append(j.b, '[')
	for i, x := range xs {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.b = strconv.AppendInt(j.b, int64(x), 10)
	}
	j.b = append(j.b, ']')
	j.first = false
}

func jsonArray(j *jsonw, k string, n int, item func(i int)) {
	j.key(k)
	j.b = append(j.b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.begin()
		item(i)
		j.end()
	}
	j.b = append(j.b, ']')
	j.first = false
}

func jsonEndpoints(j *jsonw, es []cluster.Endpoint) {
	jsonArray(j, "endpoints", len(es), func(i int) {
		j.str("name", es[i].Name)
		j.str("host", es[i].Host)
		j.int("port", int64(es[i].Port))
		j.int("securityProtocol", int64(es[i].SecurityProtocol))
	})
}

func (p *jsonMetadataPrinter) Print(v *cluster.MetadataView) error {
	j := &p.j
	im := v.Image
	j.b = j.b[:0]
	j.begin()
	j.str("type", "metadataImage")
	j.str("metadataDir", v.MetadataDir)
	j.int("offset", im.Offset)
	j.str("snapshot", im.Snapshot)
	j.optInt("snapshotEndOffset", im.SnapshotEndOffset, im.SnapshotEndOffset >= 0)
	j.optInt("logStartOffset", im.LogStartOffset, im.LogStartOffset >= 0)
	j.int("logEndOffset", im.LogEndOffset)
	j.int("recordsReplayed", im.RecordsReplayed)
	j.int("pendingTransactionRecords", int64(im.PendingTransaction))
	jsonArray(j, "features", len(im.Features), func(i int) {
		j.str("name", im.Features[i].Name)
		j.int("featureLevel", int64(im.Features[i].Level))
	})
	jsonArray(j, "brokers", len(im.Brokers), func(i int) {
		b := im.Brokers[i]
		j.int("brokerId", int64(b.ID))
		j.int("brokerEpoch", b.Epoch)
		j.str("incarnationId", b.IncarnationID)
		j.str("rack", b.Rack)
		j.bool("fenced", b.Fenced)
		j.bool("inControlledShutdown", b.InControlledShutdown)
		j.bool("isMigratingZkBroker", b.IsMigratingZkBroker)
		jsonEndpoints(j, b.Endpoints)
	})
	jsonArray(j, "controllers", len(im.Controllers), func(i int) {
		c := im.Controllers[i]
		j.int("controllerId", int64(c.ID))
		j.str("incarnationId", c.IncarnationID)
		j.bool("zkMigrationReady", c.ZkMigrationReady)
		jsonEndpoints(j, c.Endpoints)
	})
	jsonArray(j, "topics", len(im.Topics), func(i int) {
		t := im.Topics[i]
		j.str("name", t.Name)
		j.str("topicId", t.ID)
		jsonArray(j, "partitions", len(t.Partitions), func(k int) {
			pt := t.Partitions[k]
			j.int("partitionId", int64(pt.Partition))
			jsonInt32s(j, "replicas", pt.Replicas)
			jsonInt32s(j, "isr", pt.ISR)
			jsonInt32s(j, "removingReplicas", pt.RemovingReplicas)
			jsonInt32s(j, "addingReplicas", pt.AddingReplicas)
			jsonInt32s(j, "eligibleLeaderReplicas", pt.ELR)
			jsonInt32s(j, "lastKnownElr", pt.LastKnownELR)
			j.int("leader", int64(pt.Leader))
			j.int("leaderEpoch", int64(pt.LeaderEpoch))
			j.int("partitionEpoch", int64(pt.PartitionEpoch))
			j.int("leaderRecoveryState", int64(pt.LeaderRecoveryState))
		})
	})
	jsonArray(j, "configs", len(im.Configs), func(i int) {
		c := im.Configs[i]
		j.int("resourceType", int64(c.ResourceType))
		j.str("resourceName", c.ResourceName)
		j.str("name", c.Name)
		j.str("value", c.Value)
	})
	jsonArray(j, "clientQuotas", len(im.Quotas), func(i int) {
		q := im.Quotas[i]
		j.str("entity", q.Entity)
		j.str("key", q.Key)
		j.raw("value", strconv.AppendFloat(nil, q.Value, 'g', -1, 64))
	})
	if b := im.ProducerIDs; b != nil {
		j.key("producerIds")
		j.begin()
		j.int("brokerId", int64(b.BrokerID))
		j.int("brokerEpoch", b.BrokerEpoch)
		j.int("nextProducerId", b.NextProducerID)
		j.end()
	} else {
		j.null("producerIds")
	}
	jsonArray(j, "acls", len(im.ACLs), func(i int) {
		a := im.ACLs[i]
		j.str("id", a.ID)
		j.int("resourceType", int64(a.ResourceType))
		j.str("resourceName", a.ResourceName)
		j.int("patternType", int64(a.PatternType))
		j.str("principal", a.Principal)
		j.str("host", a.Host)
		j.int("operation", int64(a.Operation))
		j.int("permissionType", int64(a.PermissionType))
		j.str("resourceTypeName", a.ResourceTypeName())
		j.str("patternTypeName", a.PatternTypeName())
		j.str("operationName", a.OperationName())
		j.str("permissionTypeName", a.PermissionTypeName())
	})
	j.end()
	j.b = append(j.b, '\n')
	for _, d := range v.Disk {
		j.begin()
		j.str("type", "diskPartition")
		j.str("topic", d.Topic)
		j.int("partition", int64(d.Partition))
		j.int("node", int64(d.Node))
		j.str("status", d.Status)
		j.str("partitionDir", d.Dir)
		j.str("diskTopicId", d.DiskTopicID)
		j.str("imageTopicId", d.ImageTopicID)
		j.optInt("diskLeaderEpoch", int64(d.DiskLeaderEpoch), d.DiskLeaderEpoch >= 0)
		j.optInt("imageLeaderEpoch", int64(d.ImageLeaderEpoch), d.ImageLeaderEpoch >= 0)
		j.end()
		j.b = append(j.b, '\n')
	}
	for _, f := range v.Findings {
		jsonFinding(j, f)
	}
	_, err := p.s.Out.Write(j.b)
	return err
}
