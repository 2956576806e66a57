package status_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/psm/status"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/segtest/realdata"
)

// TestRealPartitionsAsTheREADMESays: on every partition of the shared
// fixtures' second set, status counts the segments, log bytes, batches and
// records the fixtures' README lists (an independent parse of the files),
// ends the log after the last offset it lists, and finds nothing wrong:
// every one is a healthy broker partition.
func TestRealPartitionsAsTheREADMESays(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	set, err := realdata.SecondSet(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rel, want := range set {
		if !want.Healthy() {
			continue
		}
		p, err := status.Read(filepath.Join(root, filepath.FromSlash(rel)), status.Options{})
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		n++
		if e, _ := p.Count(); e > 0 {
			t.Errorf("%s: %d error findings on a healthy partition: %v", rel, e, p.Findings)
		}
		// A metadata partition's byte count there includes its KRaft
		// snapshots (.checkpoint files).
		if p.Segments != want.Segments || (want.KRaftCheckpoints == 0 && p.LogBytes != want.Bytes) || p.Batches != want.Batches {
			t.Errorf("%s: %d segments, %d bytes, %d batches; the README: %d, %d, %d", rel, p.Segments, p.LogBytes, p.Batches, want.Segments, want.Bytes, want.Batches)
		}
		if p.LegacyEntries == 0 && p.Records != want.Records {
			t.Errorf("%s: %d records, the README %d", rel, p.Records, want.Records)
		}
		if want.Last >= 0 && p.LogEndOffset <= want.Last {
			t.Errorf("%s: log end %d, the README's last offset %d", rel, p.LogEndOffset, want.Last)
		}
	}
	if n < 20 {
		t.Errorf("only %d partitions checked", n)
	}
}

// TestDamageIsFound: the bundled broken partitions end in the damage the
// generator put there; a zero-filled tail is a warning, not an error.
func TestDamageIsFound(t *testing.T) {
	broken := filepath.Join("..", "..", "testdata", "broken")
	for name, want := range map[string]finding.Kind{
		"torn-tail": finding.TornTail, "bad-magic": finding.CorruptBatch, "zero-tail": finding.ZeroTail,
		// A flipped value byte frames and replays like a healthy batch:
		// only the CRC tells (a broker's recovery truncates there).
		"crc-mismatch": finding.CRCMismatch,
	} {
		p, err := status.Read(filepath.Join(broken, name, "events-0"), status.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		found := false
		for _, f := range p.Findings {
			found = found || f.Kind == want
		}
		e, w := p.Count()
		if !found || (want == finding.ZeroTail) != (e == 0 && w > 0) {
			t.Errorf("%s: %d errors, %d warnings, findings %v; want a %s", name, e, w, p.Findings, want)
		}
	}
}

// TestSizesAndTimes: the size counts every regular file; the time range is
// the smallest batch timestamp to the largest maxTimestamp; the newest
// snapshot is the one a restarting broker loads.
func TestSizesAndTimes(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "partitions", "orders-0")
	p, err := status.Read(dir, status.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	files := 0
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
			files++
		}
	}
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := pd.Snapshots[len(pd.Snapshots)-1].Offset
	if p.Size != size || p.Files != files || p.LastSnapshot != last || p.SnapshotLoaded != last {
		t.Errorf("size %d (%d files), snapshot %d loaded %d; want %d (%d), %d", p.Size, p.Files, p.LastSnapshot, p.SnapshotLoaded, size, files, last)
	}
	// orders-0 has a batch written with a timestamp older than its
	// predecessor (1699999940000 at offset 30): the range starts there.
	if p.FirstTimestamp != 1699999940000 || p.LastTimestamp != 1700000029001 {
		t.Errorf("time range %d..%d", p.FirstTimestamp, p.LastTimestamp)
	}
}
