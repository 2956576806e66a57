// The KRaft metadata log replayed into an image as the broker's
// MetadataLoader does: the newest snapshot (.checkpoint) at or below the
// offset asked for, then the committed record batches of
// __cluster_metadata-0, each record applied as MetadataDelta replays it.

package cluster

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// metaReplay applies metadata records in offset order.
type metaReplay struct {
	im       *MetadataImage
	brokers  map[int32]*BrokerRegistration
	ctrls    map[int32]*ControllerRegistration
	features map[string]int16
	topics   map[string]*TopicImage // by id
	parts    map[string]map[int32]*PartitionImage
	configs  map[[3]string]ConfigEntry
	quotas   map[[2]string]QuotaEntry
	acls     map[string]ACL
	inTxn    bool
	txn      []*schema.Decoded
	findings []finding.Finding
	dir      string
}

func replayMetadata(pd *segment.PartitionDir, at int64) (*MetadataImage, []finding.Finding, error) {
	r := &metaReplay{im: &MetadataImage{Skipped: map[string]int{}, LogStartOffset: -1, SnapshotEndOffset: -1}, brokers: map[int32]*BrokerRegistration{},
		ctrls: map[int32]*ControllerRegistration{}, features: map[string]int16{}, topics: map[string]*TopicImage{}, parts: map[string]map[int32]*PartitionImage{},
		configs: map[[3]string]ConfigEntry{}, quotas: map[[2]string]QuotaEntry{}, acls: map[string]ACL{}, dir: pd.Path}
	// The newest snapshot at or below at (RaftClient: latestSnapshot).
	var snap *segment.MetadataSnapshotFile
	for i := range pd.MetadataSnapshots {
		s := &pd.MetadataSnapshots[i]
		if at < 0 || s.EndOffset <= at {
			snap = s
		}
	}
	from := int64(0)
	if snap != nil {
		r.im.Snapshot, r.im.SnapshotEndOffset = snap.Path, snap.EndOffset
		if err := r.scanFile(snap.Path, 0, -1, true); err != nil {
			return nil, nil, err
		}
		r.commitPending() // a snapshot holds no open transaction
		from = snap.EndOffset
	}
	logStart, _, _ := psm.LogDirCheckpoints(pd)
	for s := range pd.Logs() {
		if r.im.LogStartOffset < 0 {
			r.im.LogStartOffset = max(s.BaseOffset, logStart)
		}
		if err := r.scanFile(s.Log, from, at, false); err != nil {
			return nil, nil, err
		}
	}
	end := max(r.im.LogEndOffset, from)
	if at >= 0 {
		end = min(at, max(end, from))
	}
	r.im.Offset = end
	r.im.PendingTransaction = len(r.txn)
	switch {
	case r.im.LogStartOffset > from:
		r.findings = append(r.findings, newFinding(finding.ImageIncomplete, ClusterMetadataTopic, pd.Path, from,
			fmt.Sprintf("the log starts at %d but the image needs every record from %d (%s): records %d..%d are in neither; the image is incomplete",
				r.im.LogStartOffset, from, snapshotText(snap), from, r.im.LogStartOffset-1)))
	case snap == nil && r.im.LogStartOffset < 0:
		r.findings = append(r.findings, newFinding(finding.ImageIncomplete, ClusterMetadataTopic, pd.Path, -1,
			"no snapshot and no log segment: there is no image"))
	}
	if at >= 0 && at > r.im.LogEndOffset && at > from {
		r.findings = append(r.findings, newFinding(finding.AtBeyondLogEnd, ClusterMetadataTopic, pd.Path, at,
			fmt.Sprintf("--at %d is beyond the log end %d: the image is the one at the end", at, r.im.LogEndOffset)))
	}
	// The metadata log's own leader-epoch-checkpoint says how far the log
	// reached: an epoch that started beyond what the snapshot and the
	// segments here hold means records are missing at the end (segments
	// not copied, or deleted), and the image is older than the broker's.
	if at < 0 && pd.LeaderEpochCheckpoint != "" {
		if es, err := segment.ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint); err == nil && len(es) > 0 {
			if last := es[len(es)-1]; last.StartOffset > r.im.Offset {
				r.findings = append(r.findings, newFinding(finding.ImageIncomplete, ClusterMetadataTopic, pd.Path, last.StartOffset,
					fmt.Sprintf("leader-epoch-checkpoint says leader epoch %d started at offset %d, but the snapshot and segments here end at %d: the records after %d are missing, and the image is older than the one the broker last had",
						last.Epoch, last.StartOffset, r.im.Offset, r.im.Offset)))
			}
		}
	}
	r.finish()
	return r.im, r.findings, nil
}

func snapshotText(s *segment.MetadataSnapshotFile) string {
	if s == nil {
		return "there is no snapshot"
	}
	return "after the snapshot " + filepath.Base(s.Path)
}

// scanFile applies the records of a log segment or snapshot file with
// offsets in [from, at) (at < 0: no end).
func (r *metaReplay) scanFile(path string, from, at int64, snapshot bool) error {
	lf, err := segment.OpenLog(path)
	if err != nil {
		return err
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{})
	var dec decode.Decoder
	name := filepath.Base(path)
	for sc.Next() {
		b := sc.Batch()
		if !snapshot {
			r.im.LogEndOffset = max(r.im.LogEndOffset, b.NextOffset())
		}
		if b.IsControl() || b.LastOffset() < from || (at >= 0 && b.BaseOffset >= at) {
			continue
		}
		if !b.CRCValid() {
			r.findings = append(r.findings, newFinding(finding.CRCMismatch, ClusterMetadataTopic, r.dir, b.BaseOffset,
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch; its records are not applied", name, sc.Pos(), b.BaseOffset)))
			continue
		}
		err := dec.Records(b, func(rec *decode.Record) error {
			if rec.Offset < from || (at >= 0 && rec.Offset >= at) {
				return nil
			}
			d, err := schema.DecodeInternal(schema.ClusterMetadata, rec.Key, rec.Value)
			if err != nil {
				r.findings = append(r.findings, newFinding(finding.CorruptRecords, ClusterMetadataTopic, r.dir, rec.Offset,
					fmt.Sprintf("%s: record at offset %d does not decode: %v", name, rec.Offset, err)))
				return nil
			}
			r.im.RecordsReplayed++
			r.record(d)
			return nil
		})
		if err != nil {
			r.findings = append(r.findings, newFinding(finding.CorruptRecords, ClusterMetadataTopic, r.dir, b.BaseOffset,
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): %v; its remaining records are not applied", name, sc.Pos(), b.BaseOffset, err)))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if f, ok := tailFinding(ClusterMetadataTopic, r.dir, name, sc.Tail(), -1, "the rest of the file is not applied"); ok {
		r.findings = append(r.findings, f)
	}
	return nil
}

// record applies one record, or holds it while a metadata transaction
// (KIP-868 BeginTransactionRecord … EndTransactionRecord) is open.
func (r *metaReplay) record(d *schema.Decoded) {
	if d.Unknown || d.Value == nil {
		r.im.Skipped[d.TypeName()]++
		return
	}
	switch d.ValueMessage.Name {
	case "BeginTransactionRecord":
		r.inTxn, r.txn = true, r.txn[:0]
		return
	case "EndTransactionRecord":
		r.commitPending()
		return
	case "AbortTransactionRecord":
		r.inTxn, r.txn = false, r.txn[:0]
		return
	}
	if r.inTxn {
		r.txn = append(r.txn, d)
		return
	}
	r.apply(d)
}

func (r *metaReplay) commitPending() {
	for _, d := range r.txn {
		r.apply(d)
	}
	r.inTxn, r.txn = false, nil
}

func uuidString(s *schema.Struct, name string) string {
	u, _ := s.UUID(name)
	return schema.UUID(u).String()
}

func ints32(s *schema.Struct, name string) ([]int32, bool) {
	vs, ok := s.Ints(name)
	if !ok {
		return nil, false
	}
	out := make([]int32, len(vs))
	for i, v := range vs {
		out[i] = int32(v)
	}
	return out, true
}

func uuids(s *schema.Struct, name string) ([]string, bool) {
	a, ok := s.Array(name)
	if !ok {
		return nil, false
	}
	var out []string
	for _, e := range a {
		if u, ok := e.(schema.UUID); ok {
			out = append(out, u.String())
		}
	}
	return out, true
}

func endpoints(s *schema.Struct) []Endpoint {
	var out []Endpoint
	for _, e := range s.Structs("endPoints") {
		out = append(out, Endpoint{Name: str(e, "name"), Host: str(e, "host"), Port: int32(i64(e, "port", 0)), SecurityProtocol: int16(i64(e, "securityProtocol", 0))})
	}
	return out
}

func featureRanges(s *schema.Struct) []FeatureRange {
	var out []FeatureRange
	for _, f := range s.Structs("features") {
		out = append(out, FeatureRange{Name: str(f, "name"), Min: int16(i64(f, "minSupportedVersion", 0)), Max: int16(i64(f, "maxSupportedVersion", 0))})
	}
	return out
}

func boolField(s *schema.Struct, name string) bool {
	b, _ := s.Bool(name)
	return b
}

// apply mirrors the *Delta.replay methods of the metadata image
// (FeaturesDelta, ClusterDelta, TopicsDelta, ConfigurationsDelta,
// ClientQuotasDelta, ProducerIdsDelta, AclsDelta).
func (r *metaReplay) apply(d *schema.Decoded) {
	v := d.Value
	switch name := d.ValueMessage.Name; name {
	case "FeatureLevelRecord":
		// A level of 0 removes the feature (FeaturesDelta.replay).
		if lvl := int16(i64(v, "featureLevel", 0)); lvl == 0 {
			delete(r.features, str(v, "name"))
		} else {
			r.features[str(v, "name")] = lvl
		}
	case "RegisterBrokerRecord", "UnregisterBrokerRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
		"BrokerRegistrationChangeRecord", "RegisterControllerRecord":
		r.applyCluster(name, v)
	case "TopicRecord", "RemoveTopicRecord", "PartitionRecord":
		r.applyTopics(name, v)
	case "PartitionChangeRecord":
		r.changePartition(v)
	case "ConfigRecord":
		r.applyConfig(v)
	case "ClientQuotaRecord":
		r.applyQuota(v)
	case "ProducerIdsRecord":
		r.im.ProducerIDs = &ProducerIDBlock{BrokerID: int32(i64(v, "brokerId", -1)), BrokerEpoch: i64(v, "brokerEpoch", -1), NextProducerID: i64(v, "nextProducerId", -1)}
	case "AccessControlEntryRecord":
		r.applyACL(v)
	case "RemoveAccessControlEntryRecord":
		delete(r.acls, uuidString(v, "id"))
	default:
		r.im.Skipped[d.TypeName()]++
	}
}

// applyCluster is ClusterDelta.replay: broker and controller
// registrations.
func (r *metaReplay) applyCluster(name string, v *schema.Struct) {
	switch name {
	case "RegisterBrokerRecord":
		b := &BrokerRegistration{ID: int32(i64(v, "brokerId", -1)), Epoch: i64(v, "brokerEpoch", -1), IncarnationID: uuidString(v, "incarnationId"),
			Rack: str(v, "rack"), Fenced: boolField(v, "fenced"), InControlledShutdown: boolField(v, "inControlledShutdown"),
			IsMigratingZkBroker: boolField(v, "isMigratingZkBroker"), Endpoints: endpoints(v), Features: featureRanges(v)}
		b.LogDirs, _ = uuids(v, "logDirs")
		r.brokers[b.ID] = b
	case "UnregisterBrokerRecord":
		delete(r.brokers, int32(i64(v, "brokerId", -1)))
	case "FenceBrokerRecord", "UnfenceBrokerRecord":
		if b := r.brokers[int32(i64(v, "id", -1))]; b != nil {
			b.Fenced = name == "FenceBrokerRecord"
		}
	case "BrokerRegistrationChangeRecord":
		b := r.brokers[int32(i64(v, "brokerId", -1))]
		if b == nil {
			return
		}
		// BrokerRegistrationFencingChange: 1 fence, -1 unfence, 0 none;
		// InControlledShutdownChange: 1 in controlled shutdown.
		switch i64(v, "fenced", 0) {
		case 1:
			b.Fenced = true
		case -1:
			b.Fenced = false
		}
		if i64(v, "inControlledShutdown", 0) == 1 {
			b.InControlledShutdown = true
		}
		if dirs, ok := uuids(v, "logDirs"); ok && len(dirs) > 0 {
			b.LogDirs = dirs
		}
	case "RegisterControllerRecord":
		c := &ControllerRegistration{ID: int32(i64(v, "controllerId", -1)), IncarnationID: uuidString(v, "incarnationId"),
			ZkMigrationReady: boolField(v, "zkMigrationReady"), Endpoints: endpoints(v), Features: featureRanges(v)}
		r.ctrls[c.ID] = c
	}
}

// applyTopics is TopicsDelta.replay for topics and new partitions.
func (r *metaReplay) applyTopics(name string, v *schema.Struct) {
	switch name {
	case "TopicRecord":
		id := uuidString(v, "topicId")
		r.topics[id] = &TopicImage{Name: str(v, "name"), ID: id}
		r.parts[id] = map[int32]*PartitionImage{}
	case "RemoveTopicRecord":
		id := uuidString(v, "topicId")
		if t := r.topics[id]; t != nil {
			// Deleting a topic deletes its configs (TopicsDelta and
			// ConfigurationControlManager.deleteTopicConfigs).
			for k := range r.configs {
				if k[0] == "2" && k[1] == t.Name {
					delete(r.configs, k)
				}
			}
		}
		delete(r.topics, id)
		delete(r.parts, id)
	case "PartitionRecord":
		id := uuidString(v, "topicId")
		ps := r.parts[id]
		if ps == nil {
			return
		}
		p := &PartitionImage{Partition: int32(i64(v, "partitionId", -1)), Leader: int32(i64(v, "leader", -1)),
			LeaderEpoch: int32(i64(v, "leaderEpoch", 0)), PartitionEpoch: int32(i64(v, "partitionEpoch", 0)),
			LeaderRecoveryState: int8(i64(v, "leaderRecoveryState", 0))}
		p.Replicas, _ = ints32(v, "replicas")
		p.ISR, _ = ints32(v, "isr")
		p.RemovingReplicas, _ = ints32(v, "removingReplicas")
		p.AddingReplicas, _ = ints32(v, "addingReplicas")
		p.ELR, _ = ints32(v, "eligibleLeaderReplicas")
		p.LastKnownELR, _ = ints32(v, "lastKnownElr")
		p.Directories, _ = uuids(v, "directories")
		ps[p.Partition] = p
	}
}

// changePartition is TopicsDelta.replay of a PartitionChangeRecord:
// PartitionRegistration.merge.
func (r *metaReplay) changePartition(v *schema.Struct) {
	ps := r.parts[uuidString(v, "topicId")]
	if ps == nil {
		return
	}
	p := ps[int32(i64(v, "partitionId", -1))]
	if p == nil {
		return
	}
	// A field the record leaves out (null: no change) keeps its value.
	for _, f := range []struct {
		name string
		dst  *[]int32
	}{{"replicas", &p.Replicas}, {"isr", &p.ISR}, {"removingReplicas", &p.RemovingReplicas},
		{"addingReplicas", &p.AddingReplicas}, {"eligibleLeaderReplicas", &p.ELR}, {"lastKnownElr", &p.LastKnownELR}} {
		if x, ok := ints32(v, f.name); ok {
			*f.dst = x
		}
	}
	if x, ok := uuids(v, "directories"); ok {
		p.Directories = x
	}
	if l := int32(i64(v, "leader", -2)); l != -2 { // NO_LEADER_CHANGE
		p.Leader, p.LeaderEpoch = l, p.LeaderEpoch+1
	}
	if s := int8(i64(v, "leaderRecoveryState", -1)); s != -1 {
		p.LeaderRecoveryState = s
	}
	p.PartitionEpoch++
}

// applyConfig is ConfigurationsDelta.replay.
func (r *metaReplay) applyConfig(v *schema.Struct) {
	k := [3]string{strconv.Itoa(int(i64(v, "resourceType", 0))), str(v, "resourceName"), str(v, "name")}
	if val, ok := v.String("value"); ok {
		r.configs[k] = ConfigEntry{ResourceType: int8(i64(v, "resourceType", 0)), ResourceName: k[1], Name: k[2], Value: val}
	} else {
		delete(r.configs, k) // a null value deletes the config
	}
}

// applyQuota is ClientQuotasDelta.replay.
func (r *metaReplay) applyQuota(v *schema.Struct) {
	var parts []string
	for _, e := range v.Structs("entity") {
		name, ok := e.String("entityName")
		if !ok {
			name = "<default>"
		}
		parts = append(parts, str(e, "entityType")+"="+name)
	}
	slices.Sort(parts)
	k := [2]string{strings.Join(parts, ","), str(v, "key")}
	if boolField(v, "remove") {
		delete(r.quotas, k)
		return
	}
	val, _ := v.Get("value")
	f, _ := val.(float64)
	r.quotas[k] = QuotaEntry{Entity: k[0], Key: k[1], Value: f}
}

// applyACL is AclsDelta.replay of a new entry.
func (r *metaReplay) applyACL(v *schema.Struct) {
	a := ACL{ID: uuidString(v, "id"), ResourceType: int8(i64(v, "resourceType", 0)), ResourceName: str(v, "resourceName"),
		PatternType: int8(i64(v, "patternType", 0)), Principal: str(v, "principal"), Host: str(v, "host"),
		Operation: int8(i64(v, "operation", 0)), PermissionType: int8(i64(v, "permissionType", 0))}
	r.acls[a.ID] = a
}

// finish renders the maps as sorted slices.
func (r *metaReplay) finish() {
	im := r.im
	for n, l := range r.features {
		im.Features = append(im.Features, Feature{n, l})
	}
	slices.SortFunc(im.Features, func(a, b Feature) int { return cmp.Compare(a.Name, b.Name) })
	for _, b := range r.brokers {
		im.Brokers = append(im.Brokers, *b)
	}
	slices.SortFunc(im.Brokers, func(a, b BrokerRegistration) int { return cmp.Compare(a.ID, b.ID) })
	for _, c := range r.ctrls {
		im.Controllers = append(im.Controllers, *c)
	}
	slices.SortFunc(im.Controllers, func(a, b ControllerRegistration) int { return cmp.Compare(a.ID, b.ID) })
	for id, t := range r.topics {
		for _, p := range r.parts[id] {
			t.Partitions = append(t.Partitions, *p)
		}
		slices.SortFunc(t.Partitions, func(a, b PartitionImage) int { return cmp.Compare(a.Partition, b.Partition) })
		im.Topics = append(im.Topics, *t)
	}
	slices.SortFunc(im.Topics, func(a, b TopicImage) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID)) })
	for _, c := range r.configs {
		im.Configs = append(im.Configs, c)
	}
	slices.SortFunc(im.Configs, func(a, b ConfigEntry) int {
		return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.ResourceName, b.ResourceName), cmp.Compare(a.Name, b.Name))
	})
	for _, q := range r.quotas {
		im.Quotas = append(im.Quotas, q)
	}
	slices.SortFunc(im.Quotas, func(a, b QuotaEntry) int { return cmp.Or(cmp.Compare(a.Entity, b.Entity), cmp.Compare(a.Key, b.Key)) })
	for _, a := range r.acls {
		im.ACLs = append(im.ACLs, a)
	}
	slices.SortFunc(im.ACLs, func(a, b ACL) int { return cmp.Compare(a.ID, b.ID) })
}
