package kafkaoracle

import (
	"fmt"
	"slices"
	"strings"
)

// Load is the driver's JSON line for one load: what the broker holds
// after LogLoader.load() and the UnifiedLog/Partition steps around it.
type Load struct {
	Request Request `json:"-"`

	Partition string `json:"partition"`
	Dir       string `json:"dir"`
	Inputs    struct {
		Mode                     string `json:"mode"`
		HadCleanShutdown         bool   `json:"hadCleanShutdown"`
		CleanShutdownFile        bool   `json:"cleanShutdownFile"`
		RecoveryPointCheckpoint  int64  `json:"recoveryPointCheckpoint"`
		LogStartOffsetCheckpoint int64  `json:"logStartOffsetCheckpoint"`
		ReplicationCheckpoint    *int64 `json:"replicationCheckpoint"`
		NowMs                    int64  `json:"nowMs"`
	} `json:"inputs"`

	Judged
	RecoveryPoint       int64  `json:"recoveryPoint"`
	FirstUnstableOffset *int64 `json:"firstUnstableOffset"`
	MapEndOffset        int64  `json:"mapEndOffset"`
	AbortedTransactions []struct {
		ProducerID       int64 `json:"producerId"`
		FirstOffset      int64 `json:"firstOffset"`
		LastOffset       int64 `json:"lastOffset"`
		LastStableOffset int64 `json:"lastStableOffset"`
		Segment          int64 `json:"segment"`
	} `json:"abortedTransactions"`
	Segments []struct {
		BaseOffset int64 `json:"baseOffset"`
		Size       int64 `json:"size"`
		NextOffset int64 `json:"nextOffset"`
	} `json:"segments"`
	LeaderEpochs                [][2]int64 `json:"leaderEpochs"`
	SnapshotFilesAfterLoad      []int64    `json:"snapshotFilesAfterLoad"`
	ProducerIDsAfterExpiryCheck []int64    `json:"producerIdsAfterExpiryCheck"`
	Exception                   *Exception `json:"exception"`
	CloseException              *Exception `json:"closeException"`
	FileChanges                 []Change   `json:"fileChanges"`
}

// OngoingTxn is an ongoing transaction as both sides report it: its
// producer and first offset (ProducerStateManager.ongoingTxns).
type OngoingTxn struct {
	ProducerID  int64 `json:"producerId"`
	FirstOffset int64 `json:"firstOffset"`
}

// Entry is a ProducerStateEntry as a snapshot stores it, with its retained
// batches.
type Entry struct {
	ProducerID            int64   `json:"producerId"`
	ProducerEpoch         int16   `json:"producerEpoch"`
	LastSequence          int32   `json:"lastSequence"`
	LastOffset            int64   `json:"lastOffset"`
	OffsetDelta           int32   `json:"offsetDelta"`
	LastTimestamp         int64   `json:"lastTimestamp"`
	CoordinatorEpoch      int32   `json:"coordinatorEpoch"`
	CurrentTxnFirstOffset *int64  `json:"currentTxnFirstOffset"`
	Batches               []Batch `json:"batches"`
}

// Batch is a retained BatchMetadata.
type Batch struct {
	FirstSequence int32 `json:"firstSequence"`
	LastSequence  int32 `json:"lastSequence"`
	LastOffset    int64 `json:"lastOffset"`
	OffsetDelta   int32 `json:"offsetDelta"`
	Timestamp     int64 `json:"timestamp"`
}

// Exception is a Java exception the load or the close threw.
type Exception struct {
	Class   string   `json:"class"`
	Message string   `json:"message"`
	Stack   []string `json:"stack"`
}

func (e *Exception) String() string {
	if e == nil {
		return "null"
	}
	return e.Class + ": " + e.Message
}

// Change is a file whose content changed between before the load and
// after the segments were closed.
type Change struct {
	File   string `json:"file"`
	Change string `json:"change"` // added, removed, changed
	Before string `json:"before"`
	After  string `json:"after"`
}

func (c Change) String() string { return c.Change + " " + c.File }

// Failed is the exception of the load or the close, if any.
func (l *Load) Failed() *Exception {
	if l.Exception != nil {
		return l.Exception
	}
	return l.CloseException
}

// Kept are the producers the broker holds once its first periodic
// expiry check has run at the load's clock (producerIdsAfterExpiryCheck):
// what kseg replay-psm with the same --clock keeps.
func (l *Load) Kept() []Entry {
	var out []Entry
	for _, e := range l.Producers {
		if slices.Contains(l.ProducerIDsAfterExpiryCheck, e.ProducerID) {
			out = append(out, e)
		}
	}
	return out
}

// Summary is one line for a failure message.
func (l *Load) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (mode %s, now %d): logStart %d, logEnd %d, hw %d, lso %d, %d producers",
		l.Dir, l.Inputs.Mode, l.Inputs.NowMs, l.LogStartOffset, l.LogEndOffset, l.HighWatermark, l.LastStableOffset, len(l.Kept()))
	if e := l.Failed(); e != nil {
		fmt.Fprintf(&b, ", exception %s", e)
	}
	return b.String()
}
