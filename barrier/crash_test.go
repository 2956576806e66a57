package barrier

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

var errCrash = errors.New("simulated crash")

// faultAt returns a FaultAt hook that fails the n-th call (0-based).
func faultAt(n int) func(string) error {
	i := 0
	return func(string) error {
		defer func() { i++ }()
		if i == n {
			return errCrash
		}
		return nil
	}
}

// kafkaFiles is a partition's file contents without kseg's own journal
// and staged files.
func kafkaFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := contentOf(snapDir(t, dir))
	for k := range out {
		if k == JournalName || k == JournalName+".tmp" || strings.HasSuffix(k, stagedSuffix) {
			delete(out, k)
		}
	}
	return out
}

// assertOldOrNew: after a fault at step i, every Kafka file of the
// partition holds exactly its content from before the operation or from
// after it, never anything in between.
func assertOldOrNew(t *testing.T, i int, step string, before, after, cur map[string]string) {
	t.Helper()
	names := map[string]bool{}
	for _, m := range []map[string]string{before, after, cur} {
		for k := range m {
			names[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if cur[k] != before[k] && cur[k] != after[k] {
			t.Fatalf("step %d (%s): %s is neither its old nor its new content", i, step, k)
		}
	}
}
