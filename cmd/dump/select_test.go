package dump

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestDumpFiltersNarrowEveryFile: --offsets, --producer-id and
// --control-only narrow every file of the dump, not only the .log: each
// index, time-index, snapshot, transaction-index and leader-epoch entry a
// filtered dump prints concerns the selected batches (found in an
// unfiltered dump of the same partition), each one it leaves out does not,
// and every summary counts what was selected beside what was scanned.
func TestDumpFiltersNarrowEveryFile(t *testing.T) {
	t.Parallel()
	type batch struct {
		dir            string
		base, last     int64
		pid            int64
		control        bool
		selected, seen bool
	}
	cases := []struct {
		part   string
		filter []string
		// sel selects a batch as the filter does.
		sel func(b batch) bool
		// from, to: --offsets (inclusive), else the whole log.
		from, to int64
		pid      int64 // --producer-id, -2 without
		control  bool
	}{
		{part: "orders-0", filter: []string{"--offsets", "20:40"}, from: 20, to: 40, pid: -2},
		{part: "orders-0", filter: []string{"--producer-id", "1001"}, from: -1 << 62, to: 1 << 62, pid: 1001},
		{part: "orders-0", filter: []string{"--producer-id", "1000", "--offsets", "30:60"}, from: 30, to: 60, pid: 1000},
		{part: "txn-0", filter: []string{"--producer-id", "2002"}, from: -1 << 62, to: 1 << 62, pid: 2002},
		{part: "txn-0", filter: []string{"--control-only"}, from: -1 << 62, to: 1 << 62, pid: -2, control: true},
		{part: "txn-0", filter: []string{"--offsets", "8:12"}, from: 8, to: 12, pid: -2},
	}
	for _, tc := range cases {
		t.Run(tc.part+" "+strings.Join(tc.filter, " "), func(t *testing.T) {
			dir := clitest.Testdata("partitions/" + tc.part)
			all := clitest.Run("dump", "--output", "json", dir)
			got := clitest.Run(append(append([]string{"dump", "--output", "json"}, tc.filter...), dir)...)
			if all.Code != ui.ExitOK || got.Code != ui.ExitOK {
				t.Fatalf("exit %d / %d: %s%s", all.Code, got.Code, all.Stderr, got.Stderr)
			}
			meets := func(b batch, lo, hi int64) bool {
				return b.base <= hi && b.last >= lo && b.base <= tc.to && b.last >= tc.from
			}
			var batches []batch
			for _, m := range clitest.CheckJSONLines(t, all) {
				if m["type"] != "batch" {
					continue
				}
				b := batch{base: int64(m["baseOffset"].(float64)), last: int64(m["lastOffset"].(float64)),
					pid: int64(m["producerId"].(float64)), control: m["isControl"].(bool)}
				b.selected = b.last >= tc.from && b.base <= tc.to && (tc.pid == -2 || b.pid == tc.pid) && (!tc.control || b.control)
				batches = append(batches, b)
			}
			// concerns: an entry spanning [lo, hi] of producer pid (-3:
			// none) is selected.
			concerns := func(lo, hi, pid int64, abort bool) bool {
				if hi < tc.from || lo > tc.to {
					return false
				}
				if tc.pid != -2 && pid != -3 && pid != tc.pid {
					return false
				}
				if (tc.pid != -2 && pid == -3) || (tc.control && !abort) {
					for _, b := range batches {
						if b.selected && meets(b, lo, hi) {
							return true
						}
					}
					return false
				}
				return true
			}
			want := map[string]int{} // file → entries selected
			for _, m := range clitest.CheckJSONLines(t, all) {
				file, _ := m["file"].(string)
				var ok bool
				switch m["type"] {
				case "index", "timeindex":
					o := int64(m["offset"].(float64))
					ok = concerns(o, o, -3, false)
				case "producerSnapshotEntry":
					last := int64(m["lastOffset"].(float64))
					ok = last >= 0 && concerns(last-int64(m["offsetDelta"].(float64)), last, int64(m["producerId"].(float64)), false)
				case "abortedTxn":
					ok = concerns(int64(m["firstOffset"].(float64)), int64(m["lastOffset"].(float64)), int64(m["producerId"].(float64)), true)
				case "leaderEpoch":
					// One epoch here: it spans the whole log.
					ok = concerns(int64(m["startOffset"].(float64)), 1<<62, -3, false)
				default:
					continue
				}
				if ok {
					want[file]++
				}
			}
			gotEntries := map[string]int{}
			selected := 0
			for _, m := range clitest.CheckJSONLines(t, got) {
				file, _ := m["file"].(string)
				switch m["type"] {
				case "batch":
					selected++
				case "index", "timeindex", "producerSnapshotEntry", "abortedTxn", "leaderEpoch":
					gotEntries[file]++
				case "summary":
					switch m["kind"] {
					case "index", "timeindex", "snapshot", "txnindex", "leader-epoch-checkpoint":
					default:
						continue
					}
					if n, ok := m["selectedEntries"].(float64); ok && int(n) != gotEntries[file] {
						t.Errorf("%s: summary says %v entries selected, %d printed", file, n, gotEntries[file])
					}
				}
			}
			if fmt.Sprint(gotEntries) != fmt.Sprint(want) {
				t.Errorf("entries printed per file:\n got %v\nwant %v", gotEntries, want)
			}
			nsel := 0
			for _, b := range batches {
				if b.selected {
					nsel++
				}
			}
			if selected != nsel {
				t.Errorf("%d batches printed, want %d", selected, nsel)
			}
			// The text summary of each .log: selected of scanned.
			text := clitest.Run(append(append([]string{"dump"}, tc.filter...), dir)...)
			n := 0
			for _, line := range strings.Split(text.Stdout, "\n") {
				if strings.HasPrefix(line, "summary: ") && strings.Contains(line, "validBytes") {
					if !strings.Contains(line, " batches selected") && !strings.Contains(line, " batch selected") || !strings.Contains(line, "; scanned") {
						t.Errorf("log summary does not say what was selected and scanned: %s", line)
					}
					var k, of int
					fmt.Sscanf(line, "summary: %d of %d", &k, &of)
					n += k
				}
			}
			if n != nsel {
				t.Errorf("text summaries count %d selected batches, want %d", n, nsel)
			}
		})
	}
}
