package mm2

import "strings"

// Kind is what an MM2 topic holds.
type Kind int

// The MM2 topics.
const (
	// NotMM2 is any other topic.
	NotMM2 Kind = iota
	// OffsetSyncs is mm2-offset-syncs.<cluster>.internal
	// (ReplicationPolicy.offsetSyncsTopic).
	OffsetSyncs
	// Checkpoints is <source>.checkpoints.internal
	// (ReplicationPolicy.checkpointsTopic).
	Checkpoints
	// Heartbeats is heartbeats, or a remote copy <source>.heartbeats
	// (ReplicationPolicy.heartbeatsTopic, isHeartbeatsTopic).
	Heartbeats
	// ConnectConfigs, ConnectOffsets and ConnectStatus are the Connect
	// topics of MM2's dedicated workers, mm2-configs.<source>.internal and
	// so on (MirrorMakerConfig.workerConfig), or a Connect cluster's
	// default connect-configs, connect-offsets and connect-status.
	ConnectConfigs
	ConnectOffsets
	ConnectStatus
)

// String names the kind as docs/mm2.md does.
func (k Kind) String() string {
	switch k {
	case OffsetSyncs:
		return "offset-syncs"
	case Checkpoints:
		return "checkpoints"
	case Heartbeats:
		return "heartbeats"
	case ConnectConfigs:
		return "connect-configs"
	case ConnectOffsets:
		return "connect-offsets"
	case ConnectStatus:
		return "connect-status"
	}
	return ""
}

// Connect reports whether the kind is one of the Connect topics (JSON).
func (k Kind) Connect() bool { return k == ConnectConfigs || k == ConnectOffsets || k == ConnectStatus }

// Topic is a topic name read as MM2 names its topics.
type Topic struct {
	Name string
	Kind Kind
	// Alias is the cluster alias the name carries: for an offset-syncs
	// topic the other cluster than the one it lives on (the target when it
	// lives on the source, offset-syncs.topic.location's default:
	// MirrorSourceConfig.offsetSyncsTopic), the source cluster of a
	// checkpoints topic, a remote heartbeats topic or a dedicated worker's
	// Connect topic; "" when there is none.
	Alias string
	// Separator is replication.policy.separator as the name shows it ("."
	// by default); "" when the name does not show it.
	Separator string
}

const (
	offsetSyncsPrefix = "mm2-offset-syncs"
	internalWord      = "internal"
	checkpointsWord   = "checkpoints"
	heartbeatsTopic   = "heartbeats"
)

// ClassifyTopic reads a topic name. DefaultReplicationPolicy builds the
// internal names with replication.policy.separator (or "." when
// replication.policy.internal.topic.separator.enabled is false), so any
// separator is recognised where the name repeats it; the dedicated
// workers' Connect topics always use "." (MirrorMakerConfig). A remote
// heartbeats topic is recognised with the default "." only: with a custom
// separator "<source>_heartbeats" cannot be told from a user topic.
func ClassifyTopic(name string) Topic {
	t := Topic{Name: name}
	switch {
	case name == heartbeatsTopic:
		t.Kind = Heartbeats
	case strings.HasSuffix(name, "."+heartbeatsTopic) && len(name) > len(heartbeatsTopic)+1:
		t.Kind, t.Separator = Heartbeats, "."
		t.Alias = name[:strings.Index(name, ".")]
	case name == "connect-configs":
		t.Kind = ConnectConfigs
	case name == "connect-offsets":
		t.Kind = ConnectOffsets
	case name == "connect-status":
		t.Kind = ConnectStatus
	default:
		t.Kind, t.Alias, t.Separator = classifyInternal(name)
	}
	return t
}

// classifyInternal reads the names that end with <sep>internal.
func classifyInternal(name string) (Kind, string, string) {
	for _, c := range []struct {
		prefix string
		kind   Kind
	}{{"mm2-configs.", ConnectConfigs}, {"mm2-offsets.", ConnectOffsets}, {"mm2-status.", ConnectStatus}} {
		if alias, ok := strings.CutPrefix(name, c.prefix); ok {
			if alias, ok = strings.CutSuffix(alias, "."+internalWord); ok && alias != "" {
				return c.kind, alias, "."
			}
		}
	}
	body, ok := strings.CutSuffix(name, internalWord)
	if !ok {
		return NotMM2, "", ""
	}
	// mm2-offset-syncs<S><alias><S>internal
	if rest, ok := strings.CutPrefix(body, offsetSyncsPrefix); ok {
		for n := 1; 2*n < len(rest); n++ {
			sep := rest[:n]
			if alias, ok := strings.CutSuffix(rest[n:], sep); ok && alias != "" {
				return OffsetSyncs, alias, sep
			}
		}
		return NotMM2, "", ""
	}
	// <alias><S>checkpoints<S>internal
	for n := 1; n < len(body); n++ {
		sep := body[len(body)-n:]
		if alias, ok := strings.CutSuffix(body, sep+checkpointsWord+sep); ok && alias != "" {
			return Checkpoints, alias, sep
		}
	}
	return NotMM2, "", ""
}

// TopicOf reads the topic of a partition directory's name
// ("mm2-offset-syncs.B.internal-0"); Kind is NotMM2 for any other.
func TopicOf(dir string) Topic {
	i := strings.LastIndexByte(dir, '-')
	if i <= 0 {
		return Topic{Name: dir}
	}
	return ClassifyTopic(dir[:i])
}

// UpstreamTopic is the source topic a remote topic of the default
// replication policy mirrors ("A.orders" with alias A and separator "." →
// "orders"); a name without the alias's prefix is returned as it is (the
// identity policy keeps names).
func UpstreamTopic(remote, alias, sep string) string {
	if alias == "" {
		return remote
	}
	if sep == "" {
		sep = "."
	}
	if up, ok := strings.CutPrefix(remote, alias+sep); ok && up != "" {
		return up
	}
	return remote
}
