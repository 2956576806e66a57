// Package cluster rebuilds, offline and from log directories alone, the
// state a Kafka broker rebuilds beyond one partition's producer state when
// it loads its logs: the group coordinator's groups and committed offsets
// (__consumer_offsets, as GroupMetadataManager.loadGroupsAndOffsets and the
// KIP-848 GroupCoordinatorShard replay it) and the transaction
// coordinator's transactional ids (__transaction_state, as
// TransactionStateManager.loadTransactionMetadata replays it), and it
// cross-checks both with the data partitions in the same directories,
// whose producer state package psm rebuilds.
//
// Why "cluster", inside psm: the three views are the cluster's own state,
// which Kafka keeps in internal topics rather than on any one partition —
// the group coordinator's (__consumer_offsets), the transaction
// coordinator's (__transaction_state) and the controller's KRaft metadata
// image (__cluster_metadata) — read back from the log directories of the
// brokers it is given. They are not producer state, but they are checked
// against psm's rebuild of the data partitions (an open transaction against
// the coordinator's view, a committed offset against the log start), so the
// package sits on psm's floor and not below it; they are state, not bytes (decode) or files (segment).
// ("logdir" would name where the bytes come from, not what is rebuilt
// from them.)
//
// The package does not decode internal-topic records itself: the key and
// value bytes are handed to a Decoder (see records.go), which returns the
// small typed records the state is built from. Replay keeps only the
// latest value per key, as the log cleaner would, so memory is bounded by
// the number of live keys, not by the size of the log.
//
// # Place in the flow
//
// kseg's packages depend one way: cmd → barrier/{mirror,recovery} → barrier
// → psm → segment/edit → segment → decode. cluster is a room of psm, on
// its floor: it opens log directories with segment (an Inventory of their
// partition directories), frames internal-topic batches with segment's
// scanner, hands their records to a Decoder (SchemaDecoder: decode/schema),
// rebuilds the data partitions with psm, and reports what it finds as
// finding.Finding (segment/finding) — damage in dump's kinds, the views'
// own otherwise. cmd's groups, txns and metadata render its views.
//
// Like every domain package of kseg it returns values and findings; it
// never prints, reads flags or exits.
package cluster
