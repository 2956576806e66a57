// Package digest writes and reads kseg's digest of a partition directory:
// what `kseg verify-chain` and `kseg mirror --dry-run` need to know of a
// partition, in a few dozen bytes per batch, so that a mirror chain can be
// proved across clusters without moving the logs (docs/digest.md is the
// user's description of the format; this comment is the wire diagram).
//
// A digest holds, per batch, every field of the batch header (baseOffset,
// batchLength, partitionLeaderEpoch, magic, the stored CRC, attributes,
// lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch,
// baseSequence, recordsCount) and a strong hash of the bytes the CRC covers
// (xxh3-128 by default, SHA-256 by option): together they pin every byte
// of the batch. Control batches (transaction markers, MIRROR_PID_RESET
// barriers) and batches that fail their CRC carry their records bytes
// instead of the hash, so that a replay of producer state, the barrier's
// validation and the location of a changed byte need nothing else. Per
// partition it holds the identity (topic, partition, topic id from
// partition.metadata), the log-start-offset-checkpoint entry, each
// segment's name, size, modification time and how its scan ended (a
// damaged or zero-filled tail), the producer snapshots (their bytes), and
// the log end offset.
//
// # Layout
//
// A digest is one or more sections; a section made with Options.From
// continues the sections before it (an incremental digest, appended to
// the earlier one). A section is:
//
//	header   one text line: "kseg-digest 1 <hash> kseg <version>\n"
//	blocks   uvarint n | n bytes of records | xxh3-64 of those n bytes (8 bytes, big-endian)
//	trailer  32 bytes: facts position (uint64) | section length (uint64) |
//	         xxh3-64 of the 16 bytes before | "kdigest\n"
//
// Every multi-byte fixed field is big-endian. A block holds whole records
// (usually 64 KiB of them); every segment starts a block, so that a reader
// can start at any segment (the facts record lists where each starts).
// The records of a section, in order:
//
//	P  partition: topic, partition, topic id, the directory, the host,
//	   when the digest was taken, From and its anchor (the batch before
//	   the first one written), the checkpoints' entries for the partition
//	S  segment: base offset, start position, file size, modification time
//	   batch records (tag 0x80-0xff) and L legacy entries, in log order
//	T  tail: how the scan of the segment ended (clean, zero-filled, torn,
//	   corrupt) with validBytes and the scanner's error
//	N  snapshot: offset, size, hash, the file's bytes (one per snapshot)
//	F  facts: log end offset, batches, and the segment table
//
// A v2 batch record packs what repeats from batch to batch: its tag's low
// seven bits say which fields follow; the rest are the previous batch's
// (attributes, partitionLeaderEpoch) or follow from it (baseOffset is the
// previous batch's next offset, the position its end, the timestamps are
// deltas). Producers are kept in a table of 128 slots per segment
// (first in, first out), so a batch of a producer seen before costs one
// byte for its producerId, producerEpoch and baseSequence when its
// sequence continues.
//
//	tag       0x80 | flags
//	            0x03 producer: 0 none (-1, -1, -1), 1 slot (uvarint)
//	                 with the slot's epoch and next sequence, 2 slot with
//	                 epoch (varint) and baseSequence (varint), 3 new:
//	                 producerId (uvarint of its uint64), epoch, baseSequence
//	            0x04 attributes follow (uvarint of the 16 stored bits)
//	            0x08 the records bytes follow instead of the hash
//	            0x10 the computed CRC follows (the stored one is wrong)
//	            0x20 baseOffset follows (varint delta from the expected)
//	            0x40 an extension byte follows: 0x01 partitionLeaderEpoch
//	                 (varint delta), 0x04 recordsCount (varint)
//	batchLength     uvarint
//	lastOffsetDelta varint
//	crc             4 bytes, as stored
//	baseTimestamp   varint delta from the previous maxTimestamp
//	maxTimestamp    varint delta from baseTimestamp
//	[computed crc]  4 bytes
//	hash | records  the hash of bytes [21, end), or bytes [61, end)
//
// Varints are encoding/binary's (zigzag for signed ones).
//
// # Place in the flow
//
// digest reads partition directories through segment (the scanner that
// frames and CRC-checks batches) and decode; it knows nothing of producer
// state or mirrors. barrier/mirror reads a digest as one node of a
// topology, beside a directory; cmd writes them (`kseg digest`).
package digest
