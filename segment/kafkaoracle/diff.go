package kafkaoracle

import (
	"encoding/json"
	"fmt"
	"slices"
)

// State is the part of `kseg replay-psm --output json` (docs/json.md) the
// oracle judges: the offsets a starting broker computes and the producer
// state it holds.
type State struct {
	Judged
	Clock *int64 `json:"clock"`
}

// Judged is what Diff compares, as both sides report it under the same
// JSON names: the log start and end, high watermark, last stable offset
// and first undecided offset, and the producer state.
type Judged struct {
	LogStartOffset       int64        `json:"logStartOffset"`
	LogEndOffset         int64        `json:"logEndOffset"`
	HighWatermark        int64        `json:"highWatermark"`
	LastStableOffset     int64        `json:"lastStableOffset"`
	FirstUndecidedOffset *int64       `json:"firstUndecidedOffset"`
	Producers            []Entry      `json:"producers"`
	OngoingTransactions  []OngoingTxn `json:"ongoingTransactions"`
}

// ParseState reads replay-psm's JSON object.
func ParseState(b []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("replay-psm output: %w", err)
	}
	return &s, nil
}

// Diff lists every difference between kseg's state and what the broker
// holds after the load, once its first expiry check has run (Load.Kept):
// the log start and end, high watermark, last stable offset and first
// undecided offset, and every producer entry field by field, retained
// batches included. Empty when they agree.
func Diff(s *State, l *Load) []string {
	var d []string
	if e := l.Failed(); e != nil {
		return []string{"the load threw " + e.String()}
	}
	num := func(name string, k, o int64) {
		if k != o {
			d = append(d, fmt.Sprintf("%s: kseg %d, Kafka %d", name, k, o))
		}
	}
	num("logStartOffset", s.LogStartOffset, l.LogStartOffset)
	num("logEndOffset", s.LogEndOffset, l.LogEndOffset)
	num("highWatermark", s.HighWatermark, l.HighWatermark)
	num("lastStableOffset", s.LastStableOffset, l.LastStableOffset)
	num("firstUndecidedOffset", orMinus1(s.FirstUndecidedOffset), orMinus1(l.FirstUndecidedOffset))
	kept := l.Kept()
	byID := map[int64]Entry{}
	for _, e := range kept {
		byID[e.ProducerID] = e
	}
	seen := map[int64]bool{}
	for _, k := range s.Producers {
		seen[k.ProducerID] = true
		o, ok := byID[k.ProducerID]
		if !ok {
			d = append(d, fmt.Sprintf("producer %d: kseg holds it, Kafka does not", k.ProducerID))
			continue
		}
		d = append(d, diffEntry(k, o)...)
	}
	for _, o := range kept {
		if !seen[o.ProducerID] {
			d = append(d, fmt.Sprintf("producer %d: Kafka holds it (epoch %d, lastOffset %d), kseg does not", o.ProducerID, o.ProducerEpoch, o.LastOffset))
		}
	}
	ko, oo := slices.Clone(s.OngoingTransactions), slices.Clone(l.OngoingTransactions)
	cmpTxn := func(a, b OngoingTxn) int { return int(a.FirstOffset - b.FirstOffset) }
	slices.SortFunc(ko, cmpTxn)
	slices.SortFunc(oo, cmpTxn)
	if !slices.Equal(ko, oo) {
		d = append(d, fmt.Sprintf("ongoing transactions: kseg %v, Kafka %v", ko, oo))
	}
	return d
}

func diffEntry(k, o Entry) []string {
	var d []string
	f := func(name string, a, b any) {
		if a != b {
			d = append(d, fmt.Sprintf("producer %d %s: kseg %v, Kafka %v", k.ProducerID, name, a, b))
		}
	}
	f("producerEpoch", k.ProducerEpoch, o.ProducerEpoch)
	f("lastSequence", k.LastSequence, o.LastSequence)
	f("lastOffset", k.LastOffset, o.LastOffset)
	f("offsetDelta", k.OffsetDelta, o.OffsetDelta)
	f("lastTimestamp", k.LastTimestamp, o.LastTimestamp)
	f("coordinatorEpoch", k.CoordinatorEpoch, o.CoordinatorEpoch)
	f("currentTxnFirstOffset", orMinus1(k.CurrentTxnFirstOffset), orMinus1(o.CurrentTxnFirstOffset))
	if !slices.Equal(k.Batches, o.Batches) {
		d = append(d, fmt.Sprintf("producer %d batches: kseg %v, Kafka %v", k.ProducerID, k.Batches, o.Batches))
	}
	return d
}

func orMinus1(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
