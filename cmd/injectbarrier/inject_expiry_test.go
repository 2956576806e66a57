package injectbarrier_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestInjectPlanSaysWhatReadBackSays: the plan's "the barrier clears N
// producers" is what the read-back after the write reports, whatever the
// barrier's timestamp. A barrier stamped now on data from 2023 clears
// none of the producers at the cut — a replay's log clock reaches the
// barrier's timestamp first and expires them (producer.id.expiration.ms) —
// and the plan says so, and why; one stamped a minute after the data
// clears them all. In abort mode the producers whose transactions the
// ABORT markers close survive to the barrier (the markers refresh their
// last timestamp).
func TestInjectPlanSaysWhatReadBackSays(t *testing.T) {
	t.Parallel()
	cases := []struct {
		part string
		args []string
		// expire: the plan must explain expired producers.
		expire bool
	}{
		{"orders-0", nil, true},
		{"orders-0", []string{"--timestamp", "1700000060000"}, false},
		{"txn-0", []string{"--mode", "abort"}, true},
		{"txn-0", []string{"--mode", "abort", "--timestamp", "1700003700000"}, false},
		{"txn-0", []string{"--yes"}, false}, // the cut leaves no producer
	}
	for _, tc := range cases {
		t.Run(tc.part+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.part)
			clitest.Fixture(t, "partitions/"+tc.part, dir)
			backups := filepath.Join(t.TempDir(), "b")
			text := clitest.Run(append(append([]string{"inject-barrier", "--dry-run", "--backup-dir", backups}, tc.args...), dir)...)
			r := clitest.Run(append(append([]string{"inject-barrier", "-o", "json", "--backup-dir", backups}, tc.args...), dir)...)
			if r.Code != ui.ExitOK {
				t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			plans := clitest.TypedLines[struct {
				ProducersCleared, ProducersAtCut, ProducersExpired int
			}](t, r.Stdout, "plan")
			results := clitest.TypedLines[struct {
				Verification *struct{ ProducersCleared int }
			}](t, r.Stdout, "result")
			if len(plans) != 1 || len(results) != 1 || results[0].Verification == nil {
				t.Fatalf("no read-back in\n%s", r.Stdout)
			}
			plan, result := plans[0], results[0]
			if plan.ProducersCleared != result.Verification.ProducersCleared {
				t.Errorf("the plan says the barrier clears %d producers, the read-back %d", plan.ProducersCleared, result.Verification.ProducersCleared)
			}
			if plan.ProducersAtCut != plan.ProducersCleared+plan.ProducersExpired {
				t.Errorf("%d producers at the cut, %d cleared, %d expired", plan.ProducersAtCut, plan.ProducersCleared, plan.ProducersExpired)
			}
			explains := strings.Contains(text.Stdout, "at the cut expire first") && strings.Contains(text.Stdout, "producer.id.expiration.ms")
			if tc.expire != (plan.ProducersExpired > 0) || tc.expire != explains {
				t.Errorf("expired %d, the plan explains it: %v; want expiry %v\n%s", plan.ProducersExpired, explains, tc.expire, text.Stdout)
			}
		})
	}
}
