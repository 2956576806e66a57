package cmd

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

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
type textTxnsPrinter struct{ s *Streams }

func (p *textTxnsPrinter) Print(v *cluster.TxnsView) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.styles(), p.s.lister()
	gap := func(more string) { fmt.Fprintln(w, more) }
	ls.lines(len(v.Transactions), "transactional ids", func(i int) {
		t := v.Transactions[i]
		fmt.Fprintf(w, "%s %s producerId %d producerEpoch %d state %s timeoutMs %d partitions %s startTimestamp %s lastUpdateTimestamp %s coordinator %s offset %d\n",
			st.paint(st.title, "transactionalId"), esc(t.TransactionalID), t.ProducerID, t.ProducerEpoch, t.State, t.TimeoutMs, esc(partitionsText(t.Partitions)),
			fmtTime(t.StartTimestamp), fmtTime(t.LastUpdateTimestamp), esc(filepath.Base(t.Coordinator)), t.RecordOffset)
	}, gap)
	ls.lines(len(v.Open), "open transactions", func(i int) {
		o := v.Open[i]
		txn := o.TransactionalID
		if txn == "" {
			txn = "-"
		}
		fmt.Fprintf(w, "%s %s-%d producerId %d producerEpoch %d firstOffset %d lastTimestamp %s age %s lastStableOffset %d transactionalId %s verdict %s: %s\n",
			st.paint(st.title, "open"), esc(o.Topic), o.Partition, o.ProducerID, o.ProducerEpoch, o.FirstOffset, fmtTime(o.LastTimestamp), fmtAge(o.AgeMs),
			o.LastStableOffset, esc(txn), o.Verdict, esc(o.Reason))
		if o.Verdict == cluster.VerdictHanging {
			fmt.Fprintf(w, "  abort: %s\n", esc(o.AbortCommand()))
		}
	}, gap)
	printUnanswerable(w, ls, v.Unanswerable)
	printFindingsText(w, st, ls, v.Findings)
	return w.Flush()
}

// tableTxnsPrinter prints two tables: transactional ids, then open
// transactions (find-hanging's columns plus the verdict).
type tableTxnsPrinter struct{ s *Streams }

func (p *tableTxnsPrinter) Print(v *cluster.TxnsView) error {
	var rows [][]string
	for _, t := range v.Transactions {
		rows = append(rows, []string{t.TransactionalID, i64(t.ProducerID), strconv.Itoa(int(t.ProducerEpoch)), t.State.String(),
			strconv.Itoa(int(t.TimeoutMs)), partitionsText(t.Partitions), fmtTime(t.LastUpdateTimestamp)})
	}
	ls := p.s.lister()
	tw := &tableOut{w: p.s.Out, width: p.s.Width}
	tw.render(ls, []string{"transactionalId", "producerId", "epoch", "state", "timeoutMs", "partitions", "lastUpdate"}, rows, "transactional ids")
	rows = nil
	// kafka-transactions find-hanging's columns; its CoordinatorEpoch and
	// LastTimestamp under --output wide (AGE says how old).
	for _, o := range v.Open {
		row := []string{fmt.Sprintf("%s-%d", o.Topic, o.Partition), i64(o.ProducerID), strconv.Itoa(int(o.ProducerEpoch)),
			i64(o.FirstOffset), fmtAge(o.AgeMs), i64(o.LastStableOffset), o.TransactionalID, o.Verdict}
		if p.s.wide {
			row = append(row, strconv.Itoa(int(o.CoordinatorEpoch)), fmtTime(o.LastTimestamp))
		}
		rows = append(rows, row)
	}
	header := []string{"partition", "producerId", "epoch", "startOffset", "age", "LSO", "transactionalId", "verdict"}
	if p.s.wide {
		header = append(header, "coordinatorEpoch", "lastTimestamp")
	}
	tw.render(ls, header, rows, "open transactions")
	w := bufio.NewWriter(p.s.Out)
	gap := func(more string) { fmt.Fprintln(w, more) }
	var hanging []cluster.OpenTransaction
	for _, o := range v.Open {
		if o.Verdict == cluster.VerdictHanging {
			hanging = append(hanging, o)
		}
	}
	ls.lines(len(hanging), "abort commands", func(i int) {
		o := hanging[i]
		fmt.Fprintf(w, "abort %s-%d: %s\n", esc(o.Topic), o.Partition, esc(o.AbortCommand()))
	}, gap)
	printUnanswerable(w, ls, v.Unanswerable)
	printFindingsText(w, p.s.styles(), ls, v.Findings)
	return w.Flush()
}

// jsonTxnsPrinter writes {"type":"transaction"}, {"type":"openTransaction"},
// {"type":"unanswerable"} and {"type":"finding"} lines (docs/json.md).
type jsonTxnsPrinter struct {
	s *Streams
	j jsonw
}

func (p *jsonTxnsPrinter) Print(v *cluster.TxnsView) error {
	j := &p.j
	j.b = j.b[:0]
	for _, t := range v.Transactions {
		j.begin()
		j.str("type", "transaction")
		j.str("transactionalId", t.TransactionalID)
		j.int("producerId", t.ProducerID)
		j.int("producerEpoch", int64(t.ProducerEpoch))
		j.optInt("previousProducerId", t.PreviousProducerID, t.PreviousProducerID >= 0)
		j.optInt("nextProducerId", t.NextProducerID, t.NextProducerID >= 0)
		j.str("state", t.State.String())
		j.int("transactionTimeoutMs", int64(t.TimeoutMs))
		jsonPartitions(j, "partitions", t.Partitions)
		j.int("transactionStartTimestamp", t.StartTimestamp)
		j.int("transactionLastUpdateTimestamp", t.LastUpdateTimestamp)
		j.str("coordinatorPartitionDir", t.Coordinator)
		j.int("recordOffset", t.RecordOffset)
		j.end()
		j.b = append(j.b, '\n')
		if err := j.spill(p.s.Out); err != nil {
			return err
		}
	}
	for _, o := range v.Open {
		j.begin()
		j.str("type", "openTransaction")
		j.str("topic", o.Topic)
		j.int("partition", int64(o.Partition))
		j.str("partitionDir", o.Dir)
		j.int("producerId", o.ProducerID)
		j.int("producerEpoch", int64(o.ProducerEpoch))
		j.int("coordinatorEpoch", int64(o.CoordinatorEpoch))
		j.int("currentTxnFirstOffset", o.FirstOffset)
		j.int("lastTimestamp", o.LastTimestamp)
		j.optInt("ageMs", o.AgeMs, o.AgeMs >= 0)
		j.int("lastStableOffset", o.LastStableOffset)
		j.bool("pinsLastStableOffset", o.PinsLSO)
		j.str("transactionalId", o.TransactionalID)
		j.str("coordinatorState", o.CoordinatorState)
		j.str("verdict", o.Verdict)
		j.str("reason", o.Reason)
		if o.Verdict == cluster.VerdictHanging {
			j.str("abortCommand", o.AbortCommand())
		}
		j.end()
		j.b = append(j.b, '\n')
		if err := j.spill(p.s.Out); err != nil {
			return err
		}
	}
	jsonUnanswerable(j, v.Unanswerable)
	for _, f := range v.Findings {
		jsonFinding(j, f)
	}
	_, err := p.s.Out.Write(j.b)
	return err
}

// printUnanswerable prints the questions a view's directories cannot
// answer, one UNANSWERABLE line each (groups and txns).
func printUnanswerable(w *bufio.Writer, ls lister, us []string) {
	ls.lines(len(us), "unanswerable questions", func(i int) { fmt.Fprintf(w, "UNANSWERABLE %s\n", esc(us[i])) }, func(more string) { fmt.Fprintln(w, more) })
}

// jsonUnanswerable writes one {"type":"unanswerable"} line per question.
func jsonUnanswerable(j *jsonw, us []string) {
	for _, u := range us {
		j.begin()
		j.str("type", "unanswerable")
		j.str("message", u)
		j.end()
		j.b = append(j.b, '\n')
	}
}
