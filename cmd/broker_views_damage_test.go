package cmd

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
)

// TestViewsNameDamageAsDumpDoes: a view that meets damage in an internal
// topic's log reports it with the kind dump gives the same bytes
// (crc-mismatch, corrupt-batch, torn-tail, corrupt-records), not words of
// its own (it said corrupt-log and corrupt-record). Each internal partition
// of the healthy example directory is damaged in four ways, and the view's
// damage findings must be exactly dump's error kinds for that partition.
func TestViewsNameDamageAsDumpDoes(t *testing.T) {
	// The views' own kinds: what the damage makes them conclude, beyond
	// the damage itself (a lost record can leave a replica missing).
	viewOwn := []string{"offset-below-log-start", "offset-above-log-end", "hanging-transaction", "coordinator-partitions-missing",
		"partition-not-replayed", "image-incomplete", "orphan-partition", "missing-replica", "leader-epoch-ahead"}
	damages := map[string]func(t *testing.T, log []byte, pos []int64) []byte{
		// one byte of the last batch's records flipped
		"crc-mismatch": func(t *testing.T, log []byte, pos []int64) []byte {
			log[len(log)-2] ^= 0x55
			return log
		},
		// the last batch cut short
		"torn-tail": func(t *testing.T, log []byte, pos []int64) []byte {
			return log[:len(log)-5]
		},
		// the magic of the last batch but one set to 7: a batch follows
		"corrupt-batch": func(t *testing.T, log []byte, pos []int64) []byte {
			log[pos[len(pos)-2]+16] = 7
			return log
		},
		// recordsCount of the last batch set to -1, CRC recomputed
		"corrupt-records": func(t *testing.T, log []byte, pos []int64) []byte {
			b := log[pos[len(pos)-1]:]
			binary.BigEndian.PutUint32(b[57:], 0xffffffff)
			binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
			return log
		},
	}
	for view, part := range map[string]string{"groups": "__consumer_offsets-9", "txns": "__transaction_state-0", "metadata": "__cluster_metadata-0"} {
		for damage, fn := range damages {
			t.Run(view+"/"+damage, func(t *testing.T) {
				ld := filepath.Join(t.TempDir(), "healthy")
				clitest.CopyTree(t, filepath.Join(clitest.TestdataDir, "logdirs", "healthy"), ld)
				logPath := filepath.Join(ld, part, "00000000000000000000.log")
				log, err := os.ReadFile(logPath)
				if err != nil {
					t.Fatal(err)
				}
				pos := batchPositions(t, logPath)
				if len(pos) < 2 {
					t.Fatalf("%s: %d batches, the damages need two", logPath, len(pos))
				}
				if err := os.WriteFile(logPath, fn(t, log, pos), 0o644); err != nil {
					t.Fatal(err)
				}
				d := clitest.Run("dump", "-o", "json", "--deep", filepath.Join(ld, part))
				var dumpKinds []string
				for _, f := range jsonByType(t, d.Stdout)["finding"] {
					if f["severity"] == "error" && !slices.Contains(dumpKinds, f["kind"].(string)) {
						dumpKinds = append(dumpKinds, f["kind"].(string))
					}
				}
				v := clitest.Run(view, "-o", "json", ld)
				var viewKinds []string
				for _, f := range jsonByType(t, v.Stdout)["finding"] {
					k := f["kind"].(string)
					if !slices.Contains(viewOwn, k) && !slices.Contains(viewKinds, k) {
						viewKinds = append(viewKinds, k)
					}
				}
				slices.Sort(dumpKinds)
				slices.Sort(viewKinds)
				if !slices.Equal(dumpKinds, []string{damage}) {
					t.Fatalf("dump reports %v, want [%s]: the damage is not what the test meant\n%s", dumpKinds, damage, d.Stdout)
				}
				if !slices.Equal(viewKinds, dumpKinds) || v.Code != ui.ExitFindings {
					t.Errorf("%s: exit %d, damage kinds %v, dump says %v\n%s%s", view, v.Code, viewKinds, dumpKinds, v.Stdout, v.Stderr)
				}
				if !strings.Contains(v.Stdout, `"partitionDir":"`+filepath.Join(ld, part)+`"`) {
					t.Errorf("%s: no finding names %s\n%s", view, part, v.Stdout)
				}
			})
		}
	}
}

// batchPositions are the byte positions of a segment's batches.
func batchPositions(t *testing.T, path string) []int64 {
	t.Helper()
	lf, err := segment.OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{})
	var pos []int64
	for sc.Next() {
		pos = append(pos, sc.Pos())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pos
}
