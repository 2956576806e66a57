package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
