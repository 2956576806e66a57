package injectbarrier_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/kafkatest"
)

// TestInjectBarrierFailoverWithRealClients: a source partition written by
// kgo on a kfake cluster, ending inside an open transaction, is copied as
// the mirror would copy it, barriered, then extended by a producer of a
// second cluster with the same transactional id — hence, on kfake as on
// Kafka, the same producer id. With the barrier replay-psm finds nothing
// wrong; without it (or ignoring it) it reports the collision.
func TestInjectBarrierFailoverWithRealClients(t *testing.T) {
	const topic = "orders"
	src := kafkatest.NewCluster(t)
	src.CreateTopic(t, topic, 1)
	src.Transact(t, "orders-tx", topic, 0, 3, kafkatest.Commit)
	src.Transact(t, "orders-tx", topic, 0, 2, kafkatest.Open)
	mirrored := src.RawBatches(t, topic, 0)
	dir := kafkatest.WritePartition(t, t.TempDir(), topic, 0, mirrored)

	code, out, stderr := clitest.Exec(t, "inject-barrier", "--backup-dir", filepath.Join(t.TempDir(), "b"), dir)
	if code != ui.ExitOK || !strings.Contains(out, "Cut: offset 4") || !strings.Contains(out, "Verified:") {
		t.Fatalf("inject-barrier: exit %d\n%s%s", code, out, stderr)
	}
	var barriered [][]byte
	for _, e := range barriertest.Entries(t, dir) {
		barriered = append(barriered, e.Raw)
	}

	// After failover the destination cluster's own producer, with the
	// same transactional id, writes to the partition.
	dst := kafkatest.NewCluster(t)
	dst.CreateTopic(t, topic, 1)
	dst.Transact(t, "orders-tx", topic, 0, 1, kafkatest.Commit)
	local := dst.RawBatches(t, topic, 0)
	if b, _ := decode.ParseBatch(local[0]); b.ProducerID != kafkatest.TxnProducerID("orders-tx") {
		t.Fatalf("the destination's producer id %d is not the source's", b.ProducerID)
	}

	with := kafkatest.WritePartition(t, t.TempDir(), topic, 0, append(barriered, barriertest.Rebase(local, 5, 0)...))
	code, out, _ = clitest.Exec(t, "replay-psm", "--from-snapshot", "none", with)
	if code != ui.ExitOK || !strings.Contains(out, "0 anomalies") || !strings.Contains(out, "offset 4: cleared 1 producer") {
		t.Fatalf("with the barrier: exit %d\n%s", code, out)
	}
	code, out, _ = clitest.Exec(t, "replay-psm", "--from-snapshot", "none", "--ignore-barriers", with)
	if code != ui.ExitFindings || !strings.Contains(out, "pid-collision") {
		t.Fatalf("ignoring the barrier: exit %d\n%s", code, out)
	}

	// The same failover without a barrier: the log truncated at its LSO
	// (4) and the destination's batches appended.
	without := kafkatest.WritePartition(t, t.TempDir(), topic, 0, append(barriered[:len(barriered)-1], barriertest.Rebase(local, 4, 0)...))
	code, out, _ = clitest.Exec(t, "replay-psm", "--from-snapshot", "none", without)
	if code != ui.ExitFindings || !strings.Contains(out, "pid-collision") {
		t.Fatalf("without the barrier: exit %d\n%s", code, out)
	}
}
