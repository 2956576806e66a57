// Package mm2 decodes the records of MirrorMaker 2's internal topics: the
// offset syncs, checkpoints and heartbeats MM2's connectors write, and the
// Kafka Connect topics (configs, offsets, status) MM2's dedicated workers
// keep. The layouts are Kafka's own, from the classes that write them
// (Apache Kafka at the oracle's commit 1eb7644349c):
//
//	connect/mirror/src/main/java/org/apache/kafka/connect/mirror/OffsetSync.java
//	connect/mirror-client/src/main/java/org/apache/kafka/connect/mirror/Checkpoint.java
//	connect/mirror-client/src/main/java/org/apache/kafka/connect/mirror/Heartbeat.java
//	connect/mirror/src/main/java/org/apache/kafka/connect/mirror/MirrorMakerConfig.java   (topic names)
//	connect/mirror-client/src/main/java/org/apache/kafka/connect/mirror/DefaultReplicationPolicy.java
//	connect/runtime/src/main/java/org/apache/kafka/connect/storage/Kafka{Config,Offset,Status}BackingStore.java
//
// MM2's own records are written with the old protocol Schema/Struct types
// (org.apache.kafka.common.protocol.types): STRING is an int16 length and
// that many UTF-8 bytes (a negative length is refused), INT16/INT32/INT64
// are big-endian. Schema.read ignores bytes after the last field.
//
//	topic                                record      key                                    value
//	mm2-offset-syncs.<cluster>.internal  OffsetSync  topic STRING, partition INT32          upstreamOffset INT64, offset INT64
//	<source>.checkpoints.internal        Checkpoint  group STRING, topic STRING,            version INT16 (0), upstreamOffset INT64,
//	                                                 partition INT32                        offset INT64, metadata STRING
//	heartbeats, <source>.heartbeats      Heartbeat   sourceClusterAlias STRING,             version INT16 (0), timestamp INT64
//	                                                 targetClusterAlias STRING
//
// "offset" is the downstream offset (OffsetSync.DOWNSTREAM_OFFSET_KEY,
// Checkpoint.DOWNSTREAM_OFFSET_KEY); a checkpoint's topic is the remote
// (target) topic, an offset sync's the upstream (source) one. Checkpoint
// and Heartbeat read any header version with their version-0 schema
// (valueSchema asserts version 0, and assertions are off in production).
//
// The Connect topics hold JSON written by Connect's JsonConverter with
// schemas disabled: the configs and status topics under string keys
// ("connector-<name>", "task-<name>-<n>", "commit-<name>", "target-state-<name>",
// "session-key", "status-task-<name>-<n>" …), the offsets topic under a
// JSON key ["<connector>",{<source partition>}]. A null value is a
// tombstone.
//
// # Place in the flow
//
// kseg's packages depend one way: cmd → barrier/{mirror,recovery,mm2} →
// barrier → psm → segment/edit → segment → decode. mm2 is a room of decode,
// beside decode/schema: decode turns a batch into records, and mm2 says
// what the key and value of a record of an MM2 topic hold. It knows bytes,
// not files: barrier/mm2 reads the offset syncs and checkpoints it decodes
// to check a replica's offset translation, and cmd's dump prints them.
package mm2
