package clustertest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/segment"
)

// TestGenerateReproducesTestdata regenerates the example log directories
// and fails unless the committed testdata/logdirs is reproduced byte for
// byte (regenerate with `go run ./testdata/gen`).
func TestGenerateReproducesTestdata(t *testing.T) {
	committed := filepath.Join("..", "..", "..", "testdata", "logdirs")
	tmp := t.TempDir()
	if err := Generate(tmp); err != nil {
		t.Fatal(err)
	}
	seen := 0
	err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		got, _ := os.ReadFile(p)
		want, err := os.ReadFile(filepath.Join(committed, rel))
		if err != nil {
			t.Errorf("%s: generated but not committed (%v)", rel, err)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the committed file; run go run ./testdata/gen", rel)
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(committed, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(committed, p)
			if _, err := os.Stat(filepath.Join(tmp, rel)); err != nil {
				t.Errorf("%s: committed but no longer generated", rel)
			}
		}
		return nil
	})
	if seen == 0 {
		t.Fatal("nothing generated")
	}
}

// TestSnapshotBatchesCarryTheSnapshotEpoch: every batch of a generated
// KRaft snapshot, its SNAPSHOT_HEADER and SNAPSHOT_FOOTER control batches
// included, carries the epoch of the snapshot's name as its
// partitionLeaderEpoch, as RecordsSnapshotWriter writes them (the real
// snapshots in ../shared/fixtures/real do: e.g. KS9602__KASYNO's
// 00000000000000012997-0000000019.checkpoint has epoch 19 in its three
// batches).
func TestSnapshotBatchesCarryTheSnapshotEpoch(t *testing.T) {
	tmp := t.TempDir()
	if err := Generate(tmp); err != nil {
		t.Fatal(err)
	}
	for _, name := range LogDirNames {
		pd, err := segment.OpenPartitionDir(filepath.Join(tmp, name, "__cluster_metadata-0"))
		if err != nil {
			t.Fatal(err)
		}
		if len(pd.MetadataSnapshots) == 0 {
			t.Fatalf("%s: no snapshot", name)
		}
		for _, s := range pd.MetadataSnapshots {
			lf, err := segment.OpenLog(s.Path)
			if err != nil {
				t.Fatal(err)
			}
			sc := lf.Scanner(segment.ScanOptions{})
			n, controls := 0, 0
			for sc.Next() {
				b := sc.Batch()
				n++
				if b.IsControl() {
					controls++
				}
				if b.PartitionLeaderEpoch != s.Epoch {
					t.Errorf("%s: batch %d (control %v) has partitionLeaderEpoch %d, the snapshot's epoch is %d", s.Path, n, b.IsControl(), b.PartitionLeaderEpoch, s.Epoch)
				}
			}
			lf.Close()
			if err := sc.Err(); err != nil || controls != 2 || n < 3 {
				t.Errorf("%s: %d batches, %d control (%v); want header, data, footer", s.Path, n, controls, err)
			}
		}
	}
}
