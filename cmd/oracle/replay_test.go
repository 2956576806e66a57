package oracle

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/segment/kafkaoracle"
)

// brokerDifferences are the partitions where replay-psm does not show the
// state Kafka's loader ends with, each with the reason (docs/psm.md,
// "Where kseg and a broker may differ"). Nothing else may differ.
var brokerDifferences = map[string]string{
	// Magic 7 at position 321: Kafka's FileLogInputStream reads a batch
	// with any magic above 1 as a v2 batch, and the magic byte lies
	// outside the CRC, so LogSegment.recover keeps it and the rebuild
	// replays it (a consumer then fails on it); kseg's replay stops there
	// with a corrupt-log error.
	"testdata/broken/bad-magic/events-0": "a batch of magic 7 is read as v2 by Kafka",
}

// TestReplayPSMIsWhatABrokerLoads: on every partition of testdata/ and
// ../shared/fixtures/real, replay-psm (default: the state a starting
// broker holds) agrees with Kafka's LogLoader started as the log
// directory says (.kafka_cleanshutdown, the checkpoints), with the same
// clock: offsets, last stable offset, every producer entry with its
// retained batches, open transactions. Where only a KIP-1279 barrier
// explains the difference (upstream Kafka does not know control type 7),
// replay-psm --ignore-barriers must agree instead.
func TestReplayPSMIsWhatABrokerLoads(t *testing.T) {
	o := kafkaoracle.Find(t)
	parts := partitions(t)
	type job struct {
		p             partition
		dir           string
		state, ignore *kafkaoracle.State
		barriers      bool
		clock         int64
		err           string
	}
	jobs := make([]job, len(parts))
	work := t.TempDir()
	parallel(t, len(parts), func(i int) string { return parts[i].name }, func(t *testing.T, i int) {
		j := &jobs[i]
		j.p = parts[i]
		dir, err := kafkaoracle.Stage(j.p.path, filepath.Join(work, strconv.Itoa(i)))
		if err != nil {
			j.err = err.Error()
			return
		}
		j.dir = dir
		var r clitest.Result
		j.state, j.clock, r = replay(t, dir)
		if j.state == nil {
			j.err = "replay-psm: exit " + strconv.Itoa(r.Code) + ": " + r.Stderr
			return
		}
		j.barriers = strings.Contains(r.Stdout, `"barriers":[{`)
		if j.barriers {
			r = clitest.Run("replay-psm", "-q", "-o", "json", "--ignore-barriers", "--clock", strconv.FormatInt(j.clock, 10), dir)
			if j.ignore, err = kafkaoracle.ParseState([]byte(r.Stdout)); err != nil {
				j.err = "replay-psm --ignore-barriers: " + err.Error() + ": " + r.Stderr
			}
		}
	})
	var reqs []kafkaoracle.Request
	for _, j := range jobs {
		if j.err != "" {
			t.Errorf("%s: %s", j.p.name, j.err)
			continue
		}
		reqs = append(reqs, kafkaoracle.Request{Dir: j.dir, Mode: kafkaoracle.Broker, NowMs: j.clock, Extra: j.p.config()})
	}
	ctx, cancel := context.WithTimeout(context.Background(), kafkaoracle.Timeout)
	defer cancel()
	loads, err := o.Run(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string]*kafkaoracle.Load{}
	for i := range loads {
		byDir[loads[i].Request.Dir] = &loads[i]
	}
	agree := 0
	for _, j := range jobs {
		l := byDir[j.dir]
		if l == nil {
			continue
		}
		d := kafkaoracle.Diff(j.state, l)
		if len(d) > 0 && j.barriers {
			// Upstream Kafka skips the barrier and keeps the producers it
			// clears: the counterfactual must be Kafka's state.
			d = kafkaoracle.Diff(j.ignore, l)
		}
		reason, known := brokerDifferences[j.p.name]
		switch {
		case len(d) == 0 && known:
			t.Errorf("%s: agrees with Kafka now; remove it from brokerDifferences (%s)", j.p.name, reason)
		case len(d) == 0:
			agree++
		case !known:
			t.Errorf("%s: replay-psm differs from what Kafka's LogLoader holds after %s:\n  %s", j.p.name, l.Summary(), strings.Join(d, "\n  "))
		}
	}
	t.Logf("replay-psm agrees with Kafka's loader on %d of %d partitions (%d known differences)", agree, len(jobs), len(brokerDifferences))
}
