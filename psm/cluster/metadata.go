package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"os"
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

// ClusterMetadataTopic is KRaft's metadata log.
const ClusterMetadataTopic = "__cluster_metadata"

// The metadata image, as MetadataImage holds it and kafka-metadata-shell
// shows it: features, cluster (brokers, controllers), topics and their
// partitions, configs, client quotas, producer ids, ACLs.

// BrokerRegistration is a RegisterBrokerRecord as later records changed it
// (BrokerRegistration).
type BrokerRegistration struct {
	ID                   int32
	Epoch                int64
	IncarnationID        string
	Rack                 string
	Fenced               bool
	InControlledShutdown bool
	IsMigratingZkBroker  bool
	Endpoints            []Endpoint
	Features             []FeatureRange
	LogDirs              []string
}

// ControllerRegistration is a RegisterControllerRecord.
type ControllerRegistration struct {
	ID               int32
	IncarnationID    string
	ZkMigrationReady bool
	Endpoints        []Endpoint
	Features         []FeatureRange
}

// Endpoint is a listener.
type Endpoint struct {
	Name             string
	Host             string
	Port             int32
	SecurityProtocol int16
}

// FeatureRange is a supported feature range.
type FeatureRange struct {
	Name     string
	Min, Max int16
}

// Feature is a finalized feature level (FeatureLevelRecord).
type Feature struct {
	Name  string
	Level int16
}

// TopicImage is a topic and its partitions.
type TopicImage struct {
	Name       string
	ID         string
	Partitions []PartitionImage // by partition id
}

// PartitionImage is a PartitionRegistration.
type PartitionImage struct {
	Partition           int32
	Replicas            []int32
	ISR                 []int32
	RemovingReplicas    []int32
	AddingReplicas      []int32
	ELR, LastKnownELR   []int32
	Leader              int32
	LeaderEpoch         int32
	PartitionEpoch      int32
	LeaderRecoveryState int8
	Directories         []string
}

// ConfigEntry is a dynamic config (ConfigRecord); ResourceType is
// ConfigResource.Type's id (2 topic, 4 broker, 8 broker logger, 16 client
// metrics, 32 group).
type ConfigEntry struct {
	ResourceType int8
	ResourceName string
	Name, Value  string
}

// QuotaEntry is a client quota (ClientQuotaRecord).
type QuotaEntry struct {
	Entity string // "user=alice,client-id=app", "<default>" for a null name
	Key    string
	Value  float64
}

// ProducerIDBlock is the last ProducerIdsRecord: the next producer id the
// controller hands out.
type ProducerIDBlock struct {
	BrokerID       int32
	BrokerEpoch    int64
	NextProducerID int64
}

// ACL is an AccessControlEntryRecord.
type ACL struct {
	ID             string
	ResourceType   int8
	ResourceName   string
	PatternType    int8
	Principal      string
	Host           string
	Operation      int8
	PermissionType int8
}

// MetadataImage is the image at Offset (every record below it applied).
type MetadataImage struct {
	// Offset is the exclusive end: the image holds every record below it.
	Offset int64
	// Snapshot is the .checkpoint loaded ("" none); the log was replayed
	// from its end offset.
	Snapshot          string
	SnapshotEndOffset int64
	LogStartOffset    int64
	LogEndOffset      int64
	RecordsReplayed   int64

	Features    []Feature
	Brokers     []BrokerRegistration
	Controllers []ControllerRegistration
	Topics      []TopicImage
	Configs     []ConfigEntry
	Quotas      []QuotaEntry
	ProducerIDs *ProducerIDBlock
	ACLs        []ACL
	// Skipped counts record types the image does not show (SCRAM
	// credentials, delegation tokens, ZooKeeper migration, NoOp).
	Skipped map[string]int
	// PendingTransaction counts records of a metadata transaction
	// (KIP-868) begun but not ended at Offset: not applied.
	PendingTransaction int
}

// Topic returns the topic with id, nil if none.
func (im *MetadataImage) Topic(id string) *TopicImage {
	for i := range im.Topics {
		if im.Topics[i].ID == id {
			return &im.Topics[i]
		}
	}
	return nil
}

// MetadataOptions tune the metadata view.
type MetadataOptions struct {
	// At is the exclusive offset the image is built to; -1 = the log end.
	At int64
}

// MetadataView is the image and its cross-check with the disks.
type MetadataView struct {
	Image *MetadataImage
	// MetadataDir is the __cluster_metadata-0 directory read.
	MetadataDir string
	// Disk is one row per partition the image assigns to a node whose log
	// directory was given, or found on disk.
	Disk     []DiskPartition
	Findings []finding.Finding
	// Unreadable are the partition directories that could not be listed
	// (their Disk rows say "unreadable").
	Unreadable []Unreadable
}

// DiskPartition compares one partition of the image with one node's disk.
type DiskPartition struct {
	Topic     string
	Partition int32
	Node      int32
	// Dir is the partition directory, "" when missing.
	Dir string
	// DiskTopicID is partition.metadata's id ("" when none); ImageTopicID
	// the image's id for the name ("" when the image has no such topic).
	DiskTopicID, ImageTopicID string
	// DiskLeaderEpoch is the last leader-epoch-checkpoint epoch, -1 none.
	DiskLeaderEpoch  int32
	ImageLeaderEpoch int32
	Status           string // ok, missing, orphan, recreated, epoch-ahead, not-assigned, unreadable
}

// LoadMetadata loads the newest KRaft snapshot at or below opts.At from
// the inventory's __cluster_metadata-0 and replays the log after it into
// the image, then compares the image with the partition directories of
// every log directory whose meta.properties names its node.
func LoadMetadata(inv *Inventory, o MetadataOptions) (*MetadataView, error) {
	rs := inv.Partitions[TopicPartition{ClusterMetadataTopic, 0}]
	if u, ok := inv.unreadable(TopicPartition{ClusterMetadataTopic, 0}); ok {
		return nil, u.Err
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%w: no %s-0 directory in %s (a ZooKeeper-mode broker keeps its metadata in ZooKeeper; give the log directory of a KRaft broker or controller)",
			ErrNoMetadataLog, ClusterMetadataTopic, logDirList(inv))
	}
	v := &MetadataView{MetadataDir: rs[0].Dir, Unreadable: slices.Clone(inv.Unreadable)}
	pd, err := inv.openPartitionDir(v.MetadataDir)
	if err != nil {
		return nil, err
	}
	im, fs, err := replayMetadata(pd, o.At)
	if err != nil {
		return nil, err
	}
	v.Image, v.Findings = im, fs
	// The disk is the disk of now. An image of the past (--at) is compared
	// with it knowing what the records after --at did: a topic created, a
	// leader elected or a replica moved later is no finding.
	var later *MetadataImage
	if o.At >= 0 {
		end, _, err := replayMetadata(pd, -1)
		if err != nil {
			return nil, err
		}
		if end.Offset > im.Offset {
			later = end
		}
	}
	v.crossCheck(inv, later)
	return v, nil
}

// ErrNoMetadataLog: no log directory given holds __cluster_metadata-0, so
// there is no image to show.
var ErrNoMetadataLog = errors.New("no KRaft metadata log")

// MissingTopics are the topics of names the image does not have.
func (v *MetadataView) MissingTopics(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.ContainsFunc(v.Image.Topics, func(t TopicImage) bool { return t.Name == n }) {
			out = append(out, n)
		}
	}
	return out
}

func logDirList(inv *Inventory) string {
	var ps []string
	for _, d := range inv.LogDirs {
		ps = append(ps, d.Path)
	}
	return strings.Join(ps, ", ")
}

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
	for _, s := range pd.Segments {
		if s.Log == "" {
			continue
		}
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
	if x, ok := ints32(v, "replicas"); ok {
		p.Replicas = x
	}
	if x, ok := ints32(v, "isr"); ok {
		p.ISR = x
	}
	if x, ok := ints32(v, "removingReplicas"); ok {
		p.RemovingReplicas = x
	}
	if x, ok := ints32(v, "addingReplicas"); ok {
		p.AddingReplicas = x
	}
	if x, ok := ints32(v, "eligibleLeaderReplicas"); ok {
		p.ELR = x
	}
	if x, ok := ints32(v, "lastKnownElr"); ok {
		p.LastKnownELR = x
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

// crossCheck compares the image with the disks: every partition directory
// of a log directory whose node id is known against the image, and every
// replica the image assigns to such a node against the directories. later
// is the image at the log end when the image is of an earlier offset
// (--at), nil otherwise.
func (v *MetadataView) crossCheck(inv *Inventory, later *MetadataImage) {
	im := v.Image
	byName := map[string]*TopicImage{}
	for i := range im.Topics {
		byName[im.Topics[i].Name] = &im.Topics[i]
	}
	nodeOf := map[string]int32{}
	nodes := map[int32]bool{}
	for _, d := range inv.LogDirs {
		nodeOf[d.Path] = d.NodeID
		if d.NodeID >= 0 {
			nodes[d.NodeID] = true
		}
	}
	type key struct {
		tp   TopicPartition
		node int32
	}
	seen := map[key]bool{}
	tps := make([]TopicPartition, 0, len(inv.Partitions))
	for tp := range inv.Partitions {
		tps = append(tps, tp)
	}
	// A partition directory that could not be listed holds the replica as
	// far as anyone can tell: "unreadable", never "missing".
	unreadable := map[TopicPartition][]Unreadable{}
	for _, u := range inv.Unreadable {
		if len(unreadable[u.TopicPartition]) == 0 && len(inv.Partitions[u.TopicPartition]) == 0 {
			tps = append(tps, u.TopicPartition)
		}
		unreadable[u.TopicPartition] = append(unreadable[u.TopicPartition], u)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	for _, tp := range tps {
		if tp.Topic == ClusterMetadataTopic {
			continue
		}
		for _, r := range inv.Partitions[tp] {
			node := nodeOf[r.LogDir]
			row := DiskPartition{Topic: tp.Topic, Partition: tp.Partition, Node: node, Dir: r.Dir, DiskTopicID: r.TopicID, DiskLeaderEpoch: -1, ImageLeaderEpoch: -1, Status: "ok"}
			if pd, err := inv.openPartitionDir(r.Dir); err == nil && pd.LeaderEpochCheckpoint != "" {
				if es, err := segment.ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint); err == nil && len(es) > 0 {
					row.DiskLeaderEpoch = es[len(es)-1].Epoch
				} else if err != nil && !errors.Is(err, os.ErrNotExist) {
					v.Findings = append(v.Findings, newFinding(finding.LeaderEpochNotCompared, tp.String(), r.Dir, -1, err.Error()))
				}
			}
			t := byName[tp.Topic]
			var p *PartitionImage
			if t != nil {
				row.ImageTopicID = t.ID
				if i, ok := slices.BinarySearchFunc(t.Partitions, tp.Partition, func(p PartitionImage, n int32) int { return cmp.Compare(p.Partition, n) }); ok {
					p = &t.Partitions[i]
					row.ImageLeaderEpoch = p.LeaderEpoch
				}
			}
			var f *finding.Finding
			row.Status, f = judgeDiskPartition(im, later, t, p, r, row, node)
			if f != nil {
				v.Findings = append(v.Findings, *f)
			}
			if row.Status != "orphan" && row.Status != "recreated" {
				// An orphan does not hold the image's replica: the
				// replica is still missing.
				seen[key{tp, node}] = true
			}
			v.Disk = append(v.Disk, row)
		}
		for _, u := range unreadable[tp] {
			node := nodeOf[u.LogDir]
			row := DiskPartition{Topic: tp.Topic, Partition: tp.Partition, Node: node, Dir: u.Dir, DiskLeaderEpoch: -1, ImageLeaderEpoch: -1, Status: "unreadable"}
			if t := byName[tp.Topic]; t != nil {
				row.ImageTopicID = t.ID
			}
			seen[key{tp, node}] = true
			v.Disk = append(v.Disk, row)
		}
	}
	// Replicas the image assigns to a node whose disk was given.
	cps := recoveryPoints{}
	for _, t := range im.Topics {
		for _, p := range t.Partitions {
			for _, n := range p.Replicas {
				tp := TopicPartition{t.Name, p.Partition}
				if !nodes[n] || seen[key{tp, n}] {
					continue
				}
				row := DiskPartition{Topic: t.Name, Partition: p.Partition, Node: n, ImageTopicID: t.ID, DiskLeaderEpoch: -1, ImageLeaderEpoch: p.LeaderEpoch, Status: "missing"}
				if later != nil {
					if lp := later.partition(t.ID, p.Partition); lp == nil || !slices.Contains(lp.Replicas, n) {
						// Moved off the node, or deleted, after --at:
						// the disk of now has no reason to hold it.
						row.Status = "unassigned-later"
						v.Disk = append(v.Disk, row)
						continue
					}
				}
				v.Disk = append(v.Disk, row)
				v.Findings = append(v.Findings, newFinding(finding.MissingReplica, tp.String(), "", -1,
					fmt.Sprintf("the metadata image at offset %d assigns %s (topic id %s) to node %d, but no log directory of node %d given holds it%s", im.Offset, tp, t.ID, n, n, cps.had(inv, n, tp))))
			}
		}
	}
}

// recoveryPoints are the recovery-point-offset-checkpoint entries of the
// log directories, read once each (nil: absent or unreadable).
type recoveryPoints map[string]map[TopicPartition]int64

// had says, for a replica missing from node's log directories, whether
// one of them still lists it in its recovery-point-offset-checkpoint
// (LogManager.checkpointLogRecoveryOffsets writes every log the broker
// holds): then the broker had the replica, and the directory is what is
// gone (deleted, or not copied with the rest). "" when none does, and
// when the node's directories hold a directory of that name (an orphan of
// a deleted or recreated topic): the entry, keyed by name, is that
// directory's.
func (c recoveryPoints) had(inv *Inventory, node int32, tp TopicPartition) string {
	for _, d := range inv.LogDirs {
		if d.NodeID != node {
			continue
		}
		if slices.ContainsFunc(inv.Partitions[tp], func(r Replica) bool { return r.LogDir == d.Path }) {
			return ""
		}
	}
	for _, d := range inv.LogDirs {
		if d.NodeID != node {
			continue
		}
		m, ok := c[d.Path]
		if !ok {
			es, _ := segment.ReadOffsetCheckpoint(filepath.Join(d.Path, "recovery-point-offset-checkpoint"))
			if es != nil {
				m = map[TopicPartition]int64{}
				for _, e := range es {
					m[TopicPartition{e.Topic, e.Partition}] = e.Offset
				}
			}
			c[d.Path] = m
		}
		if off, ok := m[tp]; ok {
			return fmt.Sprintf("; %s still lists it (recovery point %d): the broker had this replica, and its directory is gone from what was given (deleted, or not copied)",
				filepath.Join(d.Path, "recovery-point-offset-checkpoint"), off)
		}
	}
	return ""
}

// partition is the partition p of the topic with id, nil if none.
func (im *MetadataImage) partition(id string, p int32) *PartitionImage {
	t := im.Topic(id)
	if t == nil {
		return nil
	}
	if i, ok := slices.BinarySearchFunc(t.Partitions, p, func(x PartitionImage, n int32) int { return cmp.Compare(x.Partition, n) }); ok {
		return &t.Partitions[i]
	}
	return nil
}

// judgeDiskPartition gives one partition directory (replica r on node,
// row filled with its epochs and ids) its status against the image — t
// and p are the image's topic by name and partition, nil when absent —
// and the finding it makes, if any. With later (the image at the log end
// when im is of an earlier --at), what the records after im.Offset
// explain is no finding: a directory of a topic or partition created
// later is "created-later", a leader epoch the log reaches later is not
// ahead.
func judgeDiskPartition(im, later *MetadataImage, t *TopicImage, p *PartitionImage, r Replica, row DiskPartition, node int32) (string, *finding.Finding) {
	tp := TopicPartition{row.Topic, row.Partition}
	mk := func(k finding.Kind, msg string) *finding.Finding {
		f := newFinding(k, tp.String(), r.Dir, -1, msg)
		return &f
	}
	createdLater := func() bool {
		if later == nil {
			return false
		}
		if r.TopicID != "" {
			return later.partition(r.TopicID, tp.Partition) != nil
		}
		for i := range later.Topics {
			if later.Topics[i].Name == tp.Topic {
				return later.partition(later.Topics[i].ID, tp.Partition) != nil
			}
		}
		return false
	}
	switch {
	case r.TopicID != "" && im.Topic(r.TopicID) == nil:
		if createdLater() {
			return "created-later", nil
		}
		msg := fmt.Sprintf("%s holds topic id %s (partition.metadata), which the metadata image at offset %d does not have", r.Dir, r.TopicID, im.Offset)
		if t != nil {
			return "recreated", mk(finding.OrphanPartition, msg+fmt.Sprintf(": topic %s was deleted and recreated with id %s, and this directory is the old incarnation's data (the broker treats it as a stray log and deletes it)", tp.Topic, t.ID))
		}
		return "orphan", mk(finding.OrphanPartition, msg+": the topic was deleted (the broker treats it as a stray log and deletes it)")
	case r.TopicID == "" && t == nil:
		if createdLater() {
			return "created-later", nil
		}
		return "orphan", mk(finding.OrphanPartition, fmt.Sprintf("%s: the metadata image at offset %d has no topic %s (and the directory has no partition.metadata)", r.Dir, im.Offset, tp.Topic))
	case p == nil:
		if createdLater() {
			return "created-later", nil
		}
		return "orphan", mk(finding.OrphanPartition, fmt.Sprintf("%s: topic %s has no partition %d in the metadata image at offset %d", r.Dir, tp.Topic, tp.Partition, im.Offset))
	case row.DiskLeaderEpoch > p.LeaderEpoch:
		if later != nil {
			if lp := later.partition(t.ID, tp.Partition); lp != nil && lp.LeaderEpoch >= row.DiskLeaderEpoch {
				break // a leader the log elects after --at
			}
		}
		return "epoch-ahead", mk(finding.LeaderEpochAhead, fmt.Sprintf("%s: leader-epoch-checkpoint reaches leader epoch %d, ahead of the image's %d at offset %d: the log was written by a leader the controller's metadata does not know (a metadata log behind the data, or data from another cluster)",
			r.Dir, row.DiskLeaderEpoch, p.LeaderEpoch, im.Offset))
	}
	if node >= 0 && !slices.Contains(p.Replicas, node) {
		return "not-assigned", nil
	}
	return "ok", nil
}

// FilterTopics keeps only the named topics in the image's topics, the
// disk rows and the findings about partitions.
func (v *MetadataView) FilterTopics(topics []string) {
	v.Image.Topics = slices.DeleteFunc(v.Image.Topics, func(t TopicImage) bool { return !slices.Contains(topics, t.Name) })
	v.Disk = slices.DeleteFunc(v.Disk, func(d DiskPartition) bool { return !slices.Contains(topics, d.Topic) })
	v.Findings = slices.DeleteFunc(v.Findings, func(f finding.Finding) bool {
		if f.Subject == ClusterMetadataTopic {
			return false
		}
		i := strings.LastIndexByte(f.Subject, '-')
		return i > 0 && !slices.Contains(topics, f.Subject[:i])
	})
}
