package scan

import (
	"path/filepath"

	"github.com/kseg/kseg/decode/mm2"
	"github.com/kseg/kseg/decode/schema"
)

// The records of Kafka's internal topics (__consumer_offsets,
// __transaction_state, __share_group_state, __cluster_metadata,
// __remote_log_metadata; issue 13) and of MirrorMaker 2's (offset-syncs,
// checkpoints, heartbeats and the Connect topics; issue 23) are decoded by
// the partition directory's name, unless NoDecodeInternal says not to;
// DumpLogSegments decodes only what a kafka-dump-log decoder flag forces
// (ForcedTopic), whatever the directory, as DumpLogSegments does, and
// never an MM2 topic (kafka-dump-log has no such decoder).

// InternalTopic is the internal topic whose records the file at path
// holds, or "": ForcedTopic; else (unless DumpLogSegments or
// NoDecodeInternal) the topic of the partition directory, with a log
// directory's bootstrap.checkpoint counted as __cluster_metadata.
func (o *Options) InternalTopic(path string) string {
	if o.ForcedTopic != "" {
		return o.ForcedTopic
	}
	if o.DumpLogSegments || o.NoDecodeInternal {
		return ""
	}
	if filepath.Base(path) == "bootstrap.checkpoint" {
		return schema.ClusterMetadata
	}
	return schema.TopicOf(filepath.Base(filepath.Dir(path)))
}

// mm2Topic is the MM2 topic a file's partition directory belongs to
// (Kind NotMM2 when none, or when the options say not to decode).
func (o *Options) mm2Topic(path string) mm2.Topic {
	if o.ForcedTopic != "" || o.DumpLogSegments || o.NoDecodeInternal {
		return mm2.Topic{}
	}
	return mm2.TopicOf(filepath.Base(filepath.Dir(path)))
}

// internalDecoder caches the topics of the file being rendered.
type internalDecoder struct {
	file, topic string
	mm2         mm2.Topic
}

// decodeInternal decodes a data record of an internal topic into rv.
func (r *Renderer) decodeInternal(file string, rv *RecordView) {
	id := &r.internal
	if id.file != file {
		id.file, id.topic, id.mm2 = file, r.o.InternalTopic(file), r.o.mm2Topic(file)
	}
	if id.topic == "" {
		if id.mm2.Kind != mm2.NotMM2 {
			d, err := mm2.Decode(id.mm2.Kind, rv.Record.Key, rv.Record.Value)
			rv.MM2, rv.MM2Topic, rv.MM2Err = d, id.mm2.Name, err
		}
		return
	}
	d, err := schema.DecodeInternal(id.topic, rv.Record.Key, rv.Record.Value)
	rv.Internal, rv.InternalErr = d, err
	if d == nil {
		rv.Internal = &schema.Decoded{Topic: id.topic}
	}
}
