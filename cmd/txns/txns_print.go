package txns

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/cluster"
)

func fmtAge(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// textTxnsPrinter prints one line per transactional id, one per open
// transaction in a data partition (with its verdict and reason, and the
// abort command for a hanging one), the questions that cannot be
// answered, then the findings.
type textTxnsPrinter struct{ s *ui.Streams }

func (p *textTxnsPrinter) Print(v *cluster.TxnsView) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.Styles(), p.s.Lister()
	gap := func(more string) { fmt.Fprintln(w, more) }
	ls.Lines(len(v.Transactions), "transactional ids", func(i int) {
		t := v.Transactions[i]
		fmt.Fprintf(w, "%s %s producerId %d producerEpoch %d state %s timeoutMs %d partitions %s startTimestamp %s lastUpdateTimestamp %s coordinator %s offset %d\n",
			st.Paint(st.Title, "transactionalId"), ui.Esc(t.TransactionalID), t.ProducerID, t.ProducerEpoch, t.State, t.TimeoutMs, ui.Esc(brokerview.PartitionsText(t.Partitions)),
			ui.FmtTime(t.StartTimestamp), ui.FmtTime(t.LastUpdateTimestamp), ui.Esc(filepath.Base(t.Coordinator)), t.RecordOffset)
	}, gap)
	ls.Lines(len(v.Open), "open transactions", func(i int) {
		o := v.Open[i]
		txn := o.TransactionalID
		if txn == "" {
			txn = "-"
		}
		fmt.Fprintf(w, "%s %s-%d producerId %d producerEpoch %d firstOffset %d lastTimestamp %s age %s lastStableOffset %d transactionalId %s verdict %s: %s\n",
			st.Paint(st.Title, "open"), ui.Esc(o.Topic), o.Partition, o.ProducerID, o.ProducerEpoch, o.FirstOffset, ui.FmtTime(o.LastTimestamp), fmtAge(o.AgeMs),
			o.LastStableOffset, ui.Esc(txn), o.Verdict, ui.Esc(o.Reason))
		if o.Verdict == cluster.VerdictHanging {
			fmt.Fprintf(w, "  abort: %s\n", ui.Esc(o.AbortCommand()))
		}
	}, gap)
	brokerview.PrintUnanswerable(w, ls, v.Unanswerable)
	brokerview.PrintFindingsText(w, st, ls, v.Findings)
	return w.Flush()
}

// tableTxnsPrinter prints two tables: transactional ids, then open
// transactions (find-hanging's columns plus the verdict).
type tableTxnsPrinter struct{ s *ui.Streams }

func (p *tableTxnsPrinter) Print(v *cluster.TxnsView) error {
	var rows [][]string
	for _, t := range v.Transactions {
		rows = append(rows, []string{t.TransactionalID, ui.I64(t.ProducerID), strconv.Itoa(int(t.ProducerEpoch)), t.State.String(),
			strconv.Itoa(int(t.TimeoutMs)), brokerview.PartitionsText(t.Partitions), ui.FmtTime(t.LastUpdateTimestamp)})
	}
	ls := p.s.Lister()
	tw := &ui.TableOut{W: p.s.Out, Width: p.s.Width}
	tw.Render(ls, []string{"transactionalId", "producerId", "epoch", "state", "timeoutMs", "partitions", "lastUpdate"}, rows, "transactional ids")
	rows = nil
	// kafka-transactions find-hanging's columns; its CoordinatorEpoch and
	// LastTimestamp under --output wide (AGE says how old).
	for _, o := range v.Open {
		row := []string{fmt.Sprintf("%s-%d", o.Topic, o.Partition), ui.I64(o.ProducerID), strconv.Itoa(int(o.ProducerEpoch)),
			ui.I64(o.FirstOffset), fmtAge(o.AgeMs), ui.I64(o.LastStableOffset), o.TransactionalID, o.Verdict}
		if p.s.Wide {
			row = append(row, strconv.Itoa(int(o.CoordinatorEpoch)), ui.FmtTime(o.LastTimestamp))
		}
		rows = append(rows, row)
	}
	header := []string{"partition", "producerId", "epoch", "startOffset", "age", "LSO", "transactionalId", "verdict"}
	if p.s.Wide {
		header = append(header, "coordinatorEpoch", "lastTimestamp")
	}
	tw.Render(ls, header, rows, "open transactions")
	w := bufio.NewWriter(p.s.Out)
	gap := func(more string) { fmt.Fprintln(w, more) }
	var hanging []cluster.OpenTransaction
	for _, o := range v.Open {
		if o.Verdict == cluster.VerdictHanging {
			hanging = append(hanging, o)
		}
	}
	ls.Lines(len(hanging), "abort commands", func(i int) {
		o := hanging[i]
		fmt.Fprintf(w, "abort %s-%d: %s\n", ui.Esc(o.Topic), o.Partition, ui.Esc(o.AbortCommand()))
	}, gap)
	brokerview.PrintUnanswerable(w, ls, v.Unanswerable)
	brokerview.PrintFindingsText(w, p.s.Styles(), ls, v.Findings)
	return w.Flush()
}

// jsonTxnsPrinter writes {"type":"transaction"}, {"type":"openTransaction"},
// {"type":"unanswerable"} and {"type":"finding"} lines (docs/json.md).
type jsonTxnsPrinter struct {
	s *ui.Streams
	j ui.JSONWriter
}

func (p *jsonTxnsPrinter) Print(v *cluster.TxnsView) error {
	j := &p.j
	j.B = j.B[:0]
	for _, t := range v.Transactions {
		j.BeginLine("transaction")
		j.Str("transactionalId", t.TransactionalID)
		j.Int("producerId", t.ProducerID)
		j.Int("producerEpoch", int64(t.ProducerEpoch))
		j.OptInt("previousProducerId", t.PreviousProducerID, t.PreviousProducerID >= 0)
		j.OptInt("nextProducerId", t.NextProducerID, t.NextProducerID >= 0)
		j.Str("state", t.State.String())
		j.Int("transactionTimeoutMs", int64(t.TimeoutMs))
		brokerview.JSONPartitions(j, "partitions", t.Partitions)
		j.Int("transactionStartTimestamp", t.StartTimestamp)
		j.Int("transactionLastUpdateTimestamp", t.LastUpdateTimestamp)
		j.Str("coordinatorPartitionDir", t.Coordinator)
		j.Int("recordOffset", t.RecordOffset)
		j.EndLine()
		if err := j.Spill(p.s.Out); err != nil {
			return err
		}
	}
	for _, o := range v.Open {
		j.BeginLine("openTransaction")
		j.Str("topic", o.Topic)
		j.Int("partition", int64(o.Partition))
		j.Str("partitionDir", o.Dir)
		j.Int("producerId", o.ProducerID)
		j.Int("producerEpoch", int64(o.ProducerEpoch))
		j.Int("coordinatorEpoch", int64(o.CoordinatorEpoch))
		j.Int("currentTxnFirstOffset", o.FirstOffset)
		j.Int("lastTimestamp", o.LastTimestamp)
		j.OptInt("ageMs", o.AgeMs, o.AgeMs >= 0)
		j.Int("lastStableOffset", o.LastStableOffset)
		j.Bool("pinsLastStableOffset", o.PinsLSO)
		j.Str("transactionalId", o.TransactionalID)
		j.Str("coordinatorState", o.CoordinatorState)
		j.Str("verdict", o.Verdict)
		j.Str("reason", o.Reason)
		if o.Verdict == cluster.VerdictHanging {
			j.Str("abortCommand", o.AbortCommand())
		}
		j.EndLine()
		if err := j.Spill(p.s.Out); err != nil {
			return err
		}
	}
	brokerview.JSONUnanswerable(j, v.Unanswerable)
	for _, f := range v.Findings {
		brokerview.JSONFinding(j, f)
	}
	_, err := p.s.Out.Write(j.B)
	return err
}
