// Package kafkatest turns traffic from a real Kafka client (franz-go's kgo)
// against franz-go's in-process fake broker (kfake) into Kafka partition
// directories that kseg tests can inspect. Only tests and fixture generators
// import it.
//
// A Cluster is a one-broker kfake cluster listening on 127.0.0.1. The
// producer helpers (ProduceIdempotent, Transact and their *Batches variants)
// drive kgo clients synchronously. RawBatches fetches the partition back
// byte-for-byte with a read_uncommitted FetchRequest. WritePartition lays the
// batches out as <dir>/<topic>-<partition> through segment.Appender: .log
// segments, .index/.timeindex, leader-epoch-checkpoint, and the .txnindex
// entries of ABORT markers (AbortedTxns).
//
// segment's own internal tests (package segment) cannot import kafkatest
// because kafkatest imports segment. Use an external test package
// (segment_test) there.
//
// # Facts about kfake that tests may rely on
//
// These are read from kfake's source (franz-go/pkg/kfake
// v0.0.0-20260918054303-01f206a7e32c) and asserted by this package's tests.
//
// Transactional producer ids are deterministic. A new transactional id gets
// producer id FNV-64(transactional id) & math.MaxInt64 and epoch 0
// (txns.go, pids.create: "hasher := fnv.New64(); hasher.Write([]byte(*txidp));
// id = int64(hasher.Sum64()) & math.MaxInt64" ... "return id, 0"). kfake falls
// back to a random id only when that id already exists in the same cluster.
// So the same transactional id gets the same producer id and epoch 0 on two
// separate clusters. TxnProducerID computes the id without a cluster.
//
// Epochs move on after that. Each later InitProducerID for a known
// transactional id bumps the epoch (pids.create, byTxid path: bumpEpoch).
// kgo v1.22.3 uses EndTxn v5 (KIP-890), so each commit or abort also bumps it
// (txns.go doEnd: "if req.Version >= 5 { pidinf = pids.bumpEpoch(pidinf) }").
// Each Transact call uses a fresh client, so on one cluster a transactional
// id's 1st call writes epoch 0, its 2nd call writes epoch 2 (end of the 1st
// call gives 1, the 2nd InitProducerID gives 2), its 3rd call writes epoch 4,
// and so on. An Open call leaves its epoch unbumped. The next Transact with
// the same id then aborts the open transaction first (see below).
//
// Idempotent (non-transactional) producer ids are NOT deterministic.
// doInitProducerID ("Idempotent-only: always allocate fresh") calls
// pids.create(nil, 0), which uses randomID(), i.e. math/rand. Two clusters do
// not give their first idempotent producer the same id. To make them collide,
// call Cluster.PinIdempotentProducerIDs(first). Every later non-transactional
// InitProducerID then gets first, first+1, ... with epoch 0. It is a kfake
// control function; kfake's produce path creates producer state for an
// unknown idempotent producer id on its first batch (00_produce.go,
// getOrCreateNonTx, franz-go#1281).
//
// Transaction markers are real control batches in the partition log. EndTxn
// calls pidinfo.endTx, which builds txnMarkerBatch (Attributes 0x30 =
// control|transactional, one control record, key COMMIT(1) or ABORT(0),
// value EndTxnMarker with coordinator epoch 0, ProducerID/Epoch of the
// transaction, FirstSequence -1, PartitionLeaderEpoch overwritten by
// pushBatch) and appends it with c.pushBatch at the partition's next offset.
// An Open transaction has data batches (attribute 0x10) and no marker.
// kfake's differences from a real broker:
//   - The marker carries the epoch the transaction used. A broker running
//     transaction version 2 (KIP-890) writes markers with the bumped epoch.
//   - Marker timestamps are time.Now(), so marker bytes are not reproducible.
//   - An open transaction is aborted, with an ABORT marker written, when its
//     timeout expires (txns.go updateTimer: endTx(false)) or when the same
//     transactional id calls InitProducerID again (pids.create: "if
//     pidinf.inTx { pidinf.endTx(false) }"). Transact uses a 10-minute timeout
//     (kfake's maximum is 15 minutes).
//
// Fetched batches are byte-for-byte what kfake stores. pushBatch sets
// FirstOffset and PartitionLeaderEpoch (both outside the CRC) and stores
// kmsg.RecordBatch.AppendTo of the produced batch. Fetch returns those stored
// bytes (01_fetch.go, readBatchRaw). Client batches keep their CRC (kfake
// rejects a mismatching one on produce), so every batch passes
// decode.ParseBatch and CRCValid. kfake ignores the message.timestamp.type
// config. It applies LogAppendTime only when the producer sets the
// timestamp-type attribute bit, which kgo never does, and then it rewrites the
// timestamps without recomputing the CRC. kfake's partition leader epoch
// starts at 0.
//
// # Determinism
//
// Each produce batch is exactly one record batch on the wire. A produce batch
// is one ProduceIdempotent or Transact call, or one inner slice of the
// *Batches variants. The helpers buffer records with a one-minute linger and
// then call Flush (which ends the linger), so kgo cannot split them. Batches
// over ProducerBatchMaxBytes (about 1 MB) are the exception. By default
// (Records) kgo stamps records with the wall clock, as kfake does its
// markers. FixedTimestamps plus a fixed producer id (transactional, or pinned
// idempotent) make data batches reproducible byte-for-byte. Marker batches
// never are: their timestamps come from kfake's clock.
package kafkatest
