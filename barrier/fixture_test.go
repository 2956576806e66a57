package barrier

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
)

const (
	ts0 = barriertest.TS0
	// injectTs is the timestamp every test injection uses, so runs are
	// byte-for-byte reproducible.
	injectTs = barriertest.InjectTs
)

// Producers of the mirror fixture.
const (
	pidIdem  = barriertest.PIDIdempotent
	pidTxnA  = barriertest.PIDCommitted
	pidOpenB = barriertest.PIDOpenB
	pidReopC = barriertest.PIDReopened
	pidOpenE = barriertest.PIDOpenE
)

func tsOf(off int64) int64 { return barriertest.TsOf(off) }

func dataBatch(t testing.TB, base int64, n int, pid int64, epoch int16, seq int32, txn bool, ple int32) []byte {
	return barriertest.DataBatch(t, base, n, pid, epoch, seq, txn, ple)
}

func mirrorBatches(t testing.TB) [][]byte { return barriertest.MirrorBatches(t) }

// writeFixture writes batches as <tmp>/logs/mirror-0 with 400-byte
// segments (a few batches each).
func writeFixture(t testing.TB, batches [][]byte) string {
	return writeFixtureSeg(t, batches, 400)
}

func writeFixtureSeg(t testing.TB, batches [][]byte, segmentBytes int64) string {
	t.Helper()
	return barriertest.WritePartition(t, filepath.Join(t.TempDir(), "logs"), batches, segmentBytes)
}

func i32(v int32) *int32 { return &v }
