// Package txns is kseg txns: the transactions of a broker's log
// directories, rebuilt offline from __transaction_state and the open
// transactions of every partition.
package txns

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/psm/cluster"
)

// txnsOptions are the flags of `kseg txns`.
type txnsOptions struct {
	txnIDs        []string
	topics        []string
	output        string
	jobs          int
	maxTimeout    time.Duration
	numPartitions int32
	now           string

	nowMs int64 // derived
}

func (o *txnsOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringArrayVar(&o.txnIDs, "transactional-id", nil, "only this transactional id (repeatable)")
	f.StringArrayVar(&o.topics, "topic", nil, "only data partitions of this topic, and transactions that touch it (repeatable)")
	ui.AddOutputFlag(c, &o.output)
	f.DurationVar(&o.maxTimeout, "max-transaction-timeout", cluster.DefaultMaxTransactionTimeoutMs*time.Millisecond, "the cluster's transaction.max.timeout.ms: an open transaction older than this that the coordinator does not list is hanging")
	f.Int32Var(&o.numPartitions, "transaction-state-partitions", 0, "the cluster's transaction.state.log.num.partitions, to tell which coordinator partitions are missing; 0 = from the KRaft metadata image in the directories, else 50")
	f.StringVar(&o.now, "now", "log", "the clock for ages: log (the newest timestamp in the logs read), now, or epoch milliseconds / RFC 3339")
	ui.AddJobsFlag(c, &o.jobs, "partitions replayed")
}

func (o *txnsOptions) Validate(_ *cobra.Command, args []string) error {
	if err := brokerview.ValidateView("txns", o.output, args); err != nil {
		return err
	}
	if o.maxTimeout <= 0 || o.numPartitions < 0 {
		return ui.UsageErrorf("--max-transaction-timeout must be positive and --transaction-state-partitions not negative")
	}
	clock, err := psm.ParseClockMode(o.now)
	if err != nil {
		return ui.UsageErrorf("--now: %v", err)
	}
	switch clock.Kind {
	case psm.ClockLogTime:
		o.nowMs = -1
	case psm.ClockWall:
		o.nowMs = time.Now().UnixMilli()
	default:
		o.nowMs = clock.FixedMs
	}
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &txnsOptions{}
	c := &cobra.Command{
		Use:   "txns LOGDIR...",
		Short: "Transactional ids from __transaction_state and hanging transactions, offline",
		Long: `Replay every __transaction_state partition found in the log directories
into the transactional ids the transaction coordinator would load
(TransactionStateManager): producer id and epoch, state, timeout, partitions,
start and last update. Then rebuild every data partition's producer state
(as replay-psm does) and cross-check each transaction a partition still
holds open with the coordinator, as kafka-transactions.sh find-hanging does
online (KIP-664): the transaction is hanging when no transactional id holds
its producer id, or when the coordinator's record for that id does not list
the partition in an open transaction (it completed, aborted or expired the
transaction, or never added the partition), so no marker will ever be
written there and the partition's last stable offset stays pinned. Each
hanging transaction is printed with its partition, producer id, first
offset, age and pinned LSO, and the command that aborts it online.

The coordinator's partition count is taken from the KRaft metadata image
when __cluster_metadata-0 is among the directories (else 50, or
--transaction-state-partitions). When coordinator partitions are missing
(another broker's disk), the command says so and which answers it cannot give; an open transaction whose
producer id no present partition lists is then judged by its age alone
(older than --max-transaction-timeout: hanging). Ages use the log clock
(the newest timestamp read) unless --now says otherwise. Nothing is written.

Findings (exit 3) are hanging transactions and records or batches that do
not decode; transactions that cannot be judged are warnings.
` + ui.ExitStatusHelp,
		Example: `  kseg txns /var/lib/kafka/data
  kseg txns --topic orders broker1/data broker2/data broker3/data
  kseg txns -o json /var/lib/kafka/data | jq 'select(.type=="openTransaction" and .verdict=="hanging") | .abortCommand'`,
		Args: cobra.ArbitraryArgs,
	}
	return brokerview.NewCommand(c, s, o, runTxns)
}

func runTxns(s *ui.Streams, o *txnsOptions, inv *cluster.Inventory) error {
	opts := cluster.DefaultTxnsOptions()
	opts.TransactionalIDs, opts.Topics, opts.Jobs = o.txnIDs, o.topics, ui.ResolveJobs(o.jobs)
	opts.MaxTransactionTimeoutMs, opts.NumPartitions, opts.Now = o.maxTimeout.Milliseconds(), o.numPartitions, o.nowMs
	v, err := cluster.LoadTxns(inv, brokerview.Decoder(), opts)
	if err != nil {
		return err
	}
	if err := brokerview.Show(s, o.output, newTxnsPrinter(s, o), v, txnsSummary); err != nil {
		return err
	}
	return brokerview.ViewExit(s, v.Unreadable, v.Unanswered, v.Absent, v.Findings)
}

// txnsSummary is the line after the view.
func txnsSummary(v *cluster.TxnsView) string {
	hanging := 0
	for _, t := range v.Open {
		if t.Verdict == cluster.VerdictHanging {
			hanging++
		}
	}
	return fmt.Sprintf("%d of %s replayed (count from the %s), %s; %s in data partitions, %d hanging",
		len(v.Coordinators), ui.Plural(v.NumPartitions, "__transaction_state partition"), v.NumPartitionsFrom, ui.Plural(len(v.Transactions), "transactional id"),
		ui.Plural(len(v.Open), "open transaction"), hanging)
}

func newTxnsPrinter(s *ui.Streams, o *txnsOptions) brokerview.Printer[*cluster.TxnsView] {
	return brokerview.PickPrinter[*cluster.TxnsView](s, o.output, &jsonTxnsPrinter{s: s}, &tableTxnsPrinter{s: s}, &textTxnsPrinter{s: s})
}
