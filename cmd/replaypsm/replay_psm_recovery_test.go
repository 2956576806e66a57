package replaypsm_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/segment/segtest"
)

// TestReplayPSMUncleanStartIsTheRecoveredState: with no
// .kafka_cleanshutdown a broker recovers the log from the recovery point
// and then loads the snapshot recovery wrote at the log end
// (LogLoader.recoverSegment, rebuildProducerState → truncateAndReload), so
// it holds one batch per producer, stamped with the entry's last
// timestamp, and forgets the transactions completed above the high
// watermark: with none open, the last stable offset is the high watermark
// (issue 27, item 1). replay-psm showed its replay instead: several
// batches per producer and a last stable offset held at a transaction
// whose marker lies above the high watermark (16 for crashed/bump-0,
// whose high watermark is 19).
func TestReplayPSMUncleanStartIsTheRecoveredState(t *testing.T) {
	dirs, err := segtest.WriteBrokerShaped(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if filepath.Base(filepath.Dir(dir)) != "crashed" {
			continue
		}
		r := clitest.Run("replay-psm", "-o", "json", dir)
		var v struct {
			HighWatermark, LastStableOffset int64
			Recovery                        *struct{ Segments []int64 }
			Producers                       []struct {
				ProducerID, LastTimestamp int64
				Batches                   []struct{ Timestamp int64 }
			}
			OngoingTransactions []any
		}
		if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
			t.Fatalf("%s: %v\n%s", dir, err, r.Stderr)
		}
		if v.Recovery == nil || len(v.Recovery.Segments) == 0 {
			t.Errorf("%s: no recovery reported", dir)
		}
		for _, p := range v.Producers {
			if len(p.Batches) > 1 || (len(p.Batches) == 1 && p.Batches[0].Timestamp != p.LastTimestamp) {
				t.Errorf("%s: producer %d holds %+v (last timestamp %d): a broker holds the one batch its snapshot stores", dir, p.ProducerID, p.Batches, p.LastTimestamp)
			}
		}
		if len(v.OngoingTransactions) == 0 && v.LastStableOffset != v.HighWatermark {
			t.Errorf("%s: last stable offset %d with no open transaction; the broker's is the high watermark %d", dir, v.LastStableOffset, v.HighWatermark)
		}
		if text := clitest.Run("replay-psm", dir); !strings.Contains(text.Stdout, "an unclean shutdown (no .kafka_cleanshutdown): the broker recovers") {
			t.Errorf("%s: the text does not say the broker recovers the log:\n%s", dir, text.Stdout)
		}
	}
}
