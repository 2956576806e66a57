package cluster

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Kafka defaults the transactions view needs.
const (
	// DefaultMaxTransactionTimeoutMs is transaction.max.timeout.ms, the
	// age after which kafka-transactions find-hanging considers an open
	// transaction (KIP-664).
	DefaultMaxTransactionTimeoutMs = 900000
	// DefaultTxnLogPartitions is transaction.state.log.num.partitions.
	DefaultTxnLogPartitions = 50
	// DefaultOffsetsPartitions is offsets.topic.num.partitions.
	DefaultOffsetsPartitions = 50
)

// Transaction is one transactional id as the transaction coordinator
// would load it (TransactionStateManager.loadTransactionMetadata).
type Transaction struct {
	TransactionalID string
	TxnMetadataValue
	// Coordinator is the __transaction_state partition directory holding
	// it, RecordOffset the offset of its latest record there.
	Coordinator  string
	RecordOffset int64
}

// Verdicts of an open transaction.
const (
	// VerdictHanging: the coordinator will never write this partition's
	// marker (KIP-664).
	VerdictHanging = "hanging"
	// VerdictOngoing: the coordinator lists the partition in an open
	// transaction; it will write the marker.
	VerdictOngoing = "ongoing"
	// VerdictUnknown: the coordinator's state for this producer is not in
	// the directories, and the transaction is not old enough to call it
	// hanging by age alone.
	VerdictUnknown = "unknown"
)

// OpenTransaction is a transaction a data partition's producer state
// still holds open at the end of its log, with the coordinator's view.
type OpenTransaction struct {
	Topic         string
	Partition     int32
	Dir           string
	ProducerID    int64
	ProducerEpoch int16
	// CoordinatorEpoch is the producer entry's, -1 when unknown.
	CoordinatorEpoch int32
	FirstOffset      int64
	// LastTimestamp is the producer's last batch timestamp; AgeMs is
	// Now - LastTimestamp (find-hanging's "duration").
	LastTimestamp int64
	AgeMs         int64
	// LastStableOffset is the partition's LSO; PinsLSO says this
	// transaction is what holds it there.
	LastStableOffset int64
	PinsLSO          bool
	// TransactionalID and CoordinatorState: the coordinator's record for
	// this producer id, "" when none was found.
	TransactionalID  string
	CoordinatorState string
	Verdict          string
	Reason           string
}

// AbortCommand is the command that aborts the transaction online
// (kafka-transactions.sh abort, KIP-664; brokers 3.0+ need only the start
// offset).
func (t OpenTransaction) AbortCommand() string {
	return fmt.Sprintf("kafka-transactions.sh --bootstrap-server <broker:port> abort --topic %s --partition %d --start-offset %d", t.Topic, t.Partition, t.FirstOffset)
}

// TxnsOptions select and tune the transactions view.
type TxnsOptions struct {
	TransactionalIDs []string
	Topics           []string
	Jobs             int
	PSM              psm.Options
	// MaxTransactionTimeoutMs is transaction.max.timeout.ms.
	MaxTransactionTimeoutMs int64
	// NumPartitions is transaction.state.log.num.partitions; 0 takes it
	// from the KRaft metadata image when __cluster_metadata-0 is in the
	// directories (the partitions of __transaction_state), else
	// DefaultTxnLogPartitions.
	NumPartitions int32
	// Now is the clock for ages, epoch ms; -1 takes the log clock: the
	// newest timestamp in any log replayed (a cluster stopped at that
	// instant).
	Now int64
}

// DefaultTxnsOptions are Kafka's defaults.
func DefaultTxnsOptions() TxnsOptions {
	return TxnsOptions{PSM: psm.DefaultOptions(), MaxTransactionTimeoutMs: DefaultMaxTransactionTimeoutMs, Now: -1}
}

// TxnsView is the transactions view.
type TxnsView struct {
	// Transactions, sorted by TransactionalID, point into the replay's
	// own entries (no second copy of every id).
	Transactions []*Transaction
	Open         []OpenTransaction
	Coordinators []string
	// MissingCoordinators are the __transaction_state partitions (of
	// NumPartitions) not in the directories.
	MissingCoordinators []int32
	// Unanswerable are the questions the directories cannot answer.
	Unanswerable []string
	// Unanswered counts the questions among Unanswerable: the view's own
	// when no __transaction_state partition was read (open transactions
	// are then judged by their age alone), and each transactional id
	// asked for whose coordinator partition is not here. The others say
	// what a partial set of coordinator partitions leaves unknown; the
	// view answers for the rest.
	Unanswered int
	// Absent are the transactional ids asked for (TransactionalIDs) that
	// do not exist: their coordinator partition was read and holds no
	// such id.
	Absent   []string
	Findings []finding.Finding
	Now      int64
	// NumPartitions is the __transaction_state partition count used, and
	// NumPartitionsFrom where it came from ("option", "metadata image",
	// "default").
	NumPartitions     int32
	NumPartitionsFrom string
	// Unreadable are the partitions that could not be read (the
	// inventory's, and __transaction_state partitions whose files could
	// not be): the view is complete but for them.
	Unreadable []Unreadable
}

// LoadTxns replays __transaction_state and cross-checks every data
// partition's open transactions with it, as kafka-transactions.sh
// find-hanging does online (TransactionsCommand.FindHangingTransactionsCommand):
// an open transaction is hanging when no transactional id currently has
// its producer id, or when the coordinator's record for that id does not
// list the partition among those it will still write markers to.
func LoadTxns(inv *Inventory, dec Decoder, o TxnsOptions) (*TxnsView, error) {
	l := &txnsLoad{v: &TxnsView{Unreadable: slices.Clone(inv.Unreadable)}, o: o, inv: inv}
	l.coordinators(inv)
	l.readCoordinators(dec)
	l.unanswerable()
	l.openTransactions(inv)
	l.filter()
	return l.v, nil
}

// txnsLoad is LoadTxns's state between its steps.
type txnsLoad struct {
	v *TxnsView
	o TxnsOptions
	// tps are the __transaction_state partitions present, present their
	// numbers, n the partition count transactional ids hash over.
	tps     []TopicPartition
	present map[int32]bool
	n       int32
	byPID   map[int64]*Transaction
	inv     *Inventory
}

// coordinators finds the __transaction_state partitions in the
// directories, how many there are in all, and which are missing.
func (l *txnsLoad) coordinators(inv *Inventory) {
	v := l.v
	l.tps = inv.TopicPartitions(TransactionStateTopic)
	l.present = map[int32]bool{}
	for _, tp := range l.tps {
		v.Coordinators = append(v.Coordinators, inv.Partitions[tp][0].Dir)
		l.present[tp.Partition] = true
	}
	n, from := l.o.NumPartitions, "option"
	if n <= 0 {
		n, from = DefaultTxnLogPartitions, "default"
		if k := imagePartitionCount(inv, TransactionStateTopic); k > 0 {
			n, from = k, "metadata image"
		}
	}
	v.NumPartitions, v.NumPartitionsFrom = n, from
	for _, tp := range l.tps {
		n = max(n, tp.Partition+1)
	}
	for p := int32(0); p < n; p++ {
		if !l.present[p] {
			v.MissingCoordinators = append(v.MissingCoordinators, p)
		}
	}
	l.n = n
}

// readCoordinators replays every present __transaction_state partition,
// Jobs at a time: the transactional ids, sorted, and what does not decode.
// A partition that cannot be read is Unreadable and counted missing: the
// transactional ids it coordinates are unknown.
func (l *txnsLoad) readCoordinators(dec Decoder) {
	v := l.v
	res := make([]*txnReplay, len(l.tps))
	errs := eachCoordinator(l.inv, v.Coordinators, l.o.Jobs, func(i int, pd *segment.PartitionDir) error {
		res[i] = newTxnReplay(dec, v.Coordinators[i])
		_, sfs, err := scanPartition(pd, scanHandler{record: res[i].record})
		res[i].findings = append(sfs, res[i].findings...)
		return err
	})
	n := 0
	for i, r := range res {
		if errs[i] == nil {
			n += r.n
		}
	}
	// One exact allocation for the view, a pointer an id: the entries
	// stay where the replays made them.
	v.Transactions = make([]*Transaction, 0, n)
	for i, r := range res {
		if errs[i] != nil {
			tp := l.tps[i]
			v.Unreadable = append(v.Unreadable, Unreadable{tp, v.Coordinators[i], l.inv.Partitions[tp][0].LogDir, errs[i]})
			delete(l.present, tp.Partition)
			v.MissingCoordinators = append(v.MissingCoordinators, tp.Partition)
			continue
		}
		v.Findings = append(v.Findings, r.findings...)
		v.Transactions = r.appendTo(v.Transactions)
		res[i] = nil
	}
	slices.SortFunc(v.Transactions, func(a, b *Transaction) int { return cmp.Compare(a.TransactionalID, b.TransactionalID) })
	slices.Sort(v.MissingCoordinators)
}

// transactionOf is the transaction whose record holds producer id pid
// (the last in id order when several do), nil when none. The index is
// built the first time an open transaction asks: most log directories
// have none, and a million ids' index is tens of MiB.
func (l *txnsLoad) transactionOf(pid int64) *Transaction {
	if l.byPID == nil {
		l.byPID = make(map[int64]*Transaction, len(l.v.Transactions))
		for _, t := range l.v.Transactions {
			l.byPID[t.ProducerID] = t
		}
	}
	return l.byPID[pid]
}

// unanswerable says what the missing coordinator partitions leave
// unknown.
func (l *txnsLoad) unanswerable() {
	v := l.v
	switch {
	case len(l.tps) == 0:
		v.Unanswered++
		v.Unanswerable = append(v.Unanswerable,
			"no __transaction_state partition is in these directories: transactional ids, their states and partitions are unknown, and an open transaction can be called hanging only by its age (older than transaction.max.timeout.ms)")
	case len(v.MissingCoordinators) > 0:
		v.Unanswerable = append(v.Unanswerable, fmt.Sprintf(
			"%d of %d __transaction_state partitions are not in these directories (%s): the transactional ids they coordinate are unknown, so an open transaction whose producer id no present partition lists is judged by its age alone",
			len(v.MissingCoordinators), l.n, partitionList(v.MissingCoordinators)))
	}
	for _, id := range l.o.TransactionalIDs {
		p := CoordinatorPartition(id, l.n)
		if u, ok := unreadableOf(l.inv, v.Unreadable, TopicPartition{TransactionStateTopic, p}); ok {
			v.Unanswerable = append(v.Unanswerable, fmt.Sprintf("transactional id %q is coordinated by %s-%d, which could not be read (%v)", id, TransactionStateTopic, p, u.Err))
			v.Unanswered++
			continue
		}
		if !l.present[p] {
			v.Unanswerable = append(v.Unanswerable, fmt.Sprintf("transactional id %q is coordinated by %s-%d, which is not in these directories", id, TransactionStateTopic, p))
			v.Unanswered++
			continue
		}
		if !slices.ContainsFunc(v.Transactions, func(t *Transaction) bool { return t.TransactionalID == id }) {
			v.Absent = append(v.Absent, fmt.Sprintf("transactional id %q does not exist: %s-%d, which coordinates it, holds no such id", id, TransactionStateTopic, p))
		}
	}
}

// openTransactions rebuilds the data partitions' producer state and
// judges every transaction open in them against the coordinators.
func (l *txnsLoad) openTransactions(inv *Inventory) {
	v, o := l.v, l.o
	var data []TopicPartition
	for _, tp := range inv.DataPartitions() {
		if len(o.Topics) == 0 || slices.Contains(o.Topics, tp.Topic) {
			data = append(data, tp)
		}
	}
	// A data partition that could not be listed: its open transactions
	// are unknown (partition-not-replayed), not absent.
	for _, u := range inv.Unreadable {
		if _, ok := inv.unreadable(u.TopicPartition); ok && isDataTopic(u.Topic) && !slices.Contains(data, u.TopicPartition) &&
			(len(o.Topics) == 0 || slices.Contains(o.Topics, u.Topic)) {
			data = append(data, u.TopicPartition)
		}
	}
	slices.SortFunc(data, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	logs := rebuildPartitions(inv, data, o.Jobs, o.PSM)
	now := o.Now
	if now < 0 {
		for _, pl := range logs {
			if pl.Result != nil {
				now = max(now, pl.Result.Clock)
			}
		}
		for _, t := range v.Transactions {
			now = max(now, t.LastUpdateTimestamp)
		}
	}
	v.Now = now
	for _, tp := range data {
		pl := logs[tp]
		if pl == nil {
			continue
		}
		if pl.Err != nil {
			v.Unreadable = unreadLog(v.Unreadable, tp, pl, filepath.Dir(pl.Dir))
			v.Findings = append(v.Findings, newFinding(finding.PartitionNotReplayed, tp.String(), pl.Dir, -1,
				fmt.Sprintf("%s: producer state could not be rebuilt (%v): its open transactions are unknown", tp, pl.Err)))
			continue
		}
		for _, e := range pl.Result.Producers {
			if e.CurrentTxnFirstOffset < 0 {
				continue
			}
			ot := OpenTransaction{Topic: tp.Topic, Partition: tp.Partition, Dir: pl.Dir, ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch,
				CoordinatorEpoch: e.CoordinatorEpoch, FirstOffset: e.CurrentTxnFirstOffset, LastTimestamp: e.LastTimestamp, AgeMs: -1,
				LastStableOffset: pl.LastStableOffset, PinsLSO: pl.LastStableOffset == e.CurrentTxnFirstOffset}
			if now >= 0 && e.LastTimestamp >= 0 {
				ot.AgeMs = now - e.LastTimestamp
			}
			l.judge(&ot, tp)
			if len(o.TransactionalIDs) > 0 && !slices.Contains(o.TransactionalIDs, ot.TransactionalID) {
				continue
			}
			v.Open = append(v.Open, ot)
			switch ot.Verdict {
			case VerdictHanging:
				v.Findings = append(v.Findings, newFinding(finding.HangingTransaction, tp.String(), pl.Dir, ot.FirstOffset,
					fmt.Sprintf("producer %d (epoch %d) has a transaction open in %s from offset %d: %s; it pins the last stable offset at %d. Abort it online: %s",
						ot.ProducerID, ot.ProducerEpoch, tp, ot.FirstOffset, ot.Reason, pl.LastStableOffset, ot.AbortCommand())))
			case VerdictUnknown:
				v.Findings = append(v.Findings, newFinding(finding.CoordinatorPartitionsMissing, tp.String(), pl.Dir, ot.FirstOffset,
					fmt.Sprintf("producer %d has a transaction open in %s from offset %d; whether it is hanging cannot be told: %s", ot.ProducerID, tp, ot.FirstOffset, ot.Reason)))
			}
		}
	}
}

// judge gives an open transaction of tp its verdict: what the
// coordinator's record for its producer id says, or, without one, its
// age.
func (l *txnsLoad) judge(ot *OpenTransaction, tp TopicPartition) {
	o := l.o
	old := ot.AgeMs > o.MaxTransactionTimeoutMs
	t := l.transactionOf(ot.ProducerID)
	switch {
	case t != nil:
		ot.TransactionalID, ot.CoordinatorState = t.TransactionalID, t.State.String()
		if t.State.open() && listsPartition(t.Partitions, tp) {
			ot.Verdict = VerdictOngoing
			ot.Reason = fmt.Sprintf("the coordinator's record (%s, offset %d) lists %s in transaction %q in state %s: it will write the marker", filepathBase(t.Coordinator), t.RecordOffset, tp, t.TransactionalID, t.State)
			if old {
				ot.Reason += fmt.Sprintf("; but the transaction is older than transaction.max.timeout.ms (%d ms), so the coordinator should already have aborted it", o.MaxTransactionTimeoutMs)
			}
		} else {
			ot.Verdict = VerdictHanging
			ot.Reason = fmt.Sprintf("the coordinator's record for transactional id %q (%s, offset %d) is in state %s and does not list %s: no marker will ever be written there",
				t.TransactionalID, filepathBase(t.Coordinator), t.RecordOffset, t.State, tp)
		}
	case len(l.tps) > 0 && len(l.v.MissingCoordinators) == 0:
		ot.Verdict = VerdictHanging
		ot.Reason = fmt.Sprintf("no transactional id in any of the %d __transaction_state partitions has producer id %d: the coordinator does not know this transaction", l.n, ot.ProducerID)
		if !old {
			ot.Verdict = VerdictUnknown
			ot.Reason += fmt.Sprintf(", but it is not older than transaction.max.timeout.ms (%d ms), which find-hanging requires", o.MaxTransactionTimeoutMs)
		}
	case old:
		ot.Verdict = VerdictHanging
		ot.Reason = fmt.Sprintf("open for longer than transaction.max.timeout.ms (%d ms): the coordinator would have aborted it by now (its record is not in these directories)", o.MaxTransactionTimeoutMs)
	default:
		ot.Verdict = VerdictUnknown
		ot.Reason = "the coordinator partition that could list this producer id is not in these directories, and the transaction is younger than transaction.max.timeout.ms"
	}
}

// filter keeps the transactional ids the options ask for
// (TransactionalIDs, Topics).
func (l *txnsLoad) filter() {
	v, o := l.v, l.o
	if len(o.TransactionalIDs) > 0 {
		v.Transactions = slices.DeleteFunc(v.Transactions, func(t *Transaction) bool { return !slices.Contains(o.TransactionalIDs, t.TransactionalID) })
	}
	if len(o.Topics) > 0 {
		v.Transactions = slices.DeleteFunc(v.Transactions, func(t *Transaction) bool {
			for _, p := range t.Partitions {
				if slices.Contains(o.Topics, p.Topic) {
					return false
				}
			}
			return true
		})
	}
}

func listsPartition(ps []TopicPartitions, tp TopicPartition) bool {
	for _, p := range ps {
		if p.Topic == tp.Topic && slices.Contains(p.Partitions, tp.Partition) {
			return true
		}
	}
	return false
}

func partitionList(ps []int32) string {
	var b strings.Builder
	for i, p := range ps {
		if i == 8 {
			fmt.Fprintf(&b, ", … %d more", len(ps)-8)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", p)
	}
	return b.String()
}

func filepathBase(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// imagePartitionCount is the number of partitions the KRaft metadata image
// in the directories gives topic, 0 when there is no image or no topic.
func imagePartitionCount(inv *Inventory, topic string) int32 {
	rs := inv.Partitions[TopicPartition{ClusterMetadataTopic, 0}]
	if len(rs) == 0 {
		return 0
	}
	pd, err := inv.openPartitionDir(rs[0].Dir)
	if err != nil {
		return 0
	}
	im, _, err := replayMetadata(pd, -1)
	if err != nil {
		return 0
	}
	for _, t := range im.Topics {
		if t.Name == topic {
			return int32(len(t.Partitions))
		}
	}
	return 0
}

// CoordinatorPartition is the partition of the coordinator's topic that
// owns key (a group or transactional id): Utils.abs(key.hashCode()) %
// numPartitions, with Java's String.hashCode over UTF-16 code units
// (GroupCoordinatorService.partitionFor, TransactionStateManager.partitionFor).
func CoordinatorPartition(key string, numPartitions int32) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(key)) {
		h = 31*h + int32(u)
	}
	if h == -1<<31 {
		h = 0 // Utils.abs
	} else if h < 0 {
		h = -h
	}
	return h % numPartitions
}
