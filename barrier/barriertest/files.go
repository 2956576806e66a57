package barriertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/kafkaoracle"
	"github.com/kseg/kseg/segment/segtest"
)

// What the write commands' tests (barrier, its rooms and the edit engine's
// crash tests) check partitions with: file snapshots and comparisons, and
// the fault hook of a simulated crash.

// InjectTs is the timestamp every test injection uses, so runs are byte
// for byte reproducible.
const InjectTs = TS0 + 60_000

// PartitionsDir is the repository's testdata/partitions, wherever the
// test runs from.
func PartitionsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "partitions")
}

// CRCDamagedOrders is a copy of testdata/partitions/orders-0 (under a
// fresh logs/ log directory) with a flipped bit in the record bytes of the
// batch at offsets 36..39 (position 653 of segment 26): a CRC mismatch
// recovery cuts at.
func CRCDamagedOrders(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "logs", "orders-0")
	CopyTree(t, filepath.Join(PartitionsDir(), "orders-0"), dir)
	path := filepath.Join(dir, segment.SegmentFileName(26, segment.LogSuffix))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint64(b[653:]) != 36 {
		t.Fatalf("no batch at 653")
	}
	b[653+100] ^= 0x04
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Snap is a file's content hash, size, mode and mtime.
type Snap struct {
	Sum   string
	Size  int64
	Mtime time.Time
	Mode  fs.FileMode
}

// SnapDir records every file under dir (and dir's own mtime under ".").
func SnapDir(tb testing.TB, dir string) map[string]Snap {
	tb.Helper()
	out := map[string]Snap{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st, err := d.Info()
		if err != nil {
			return err
		}
		s := Snap{Mtime: st.ModTime(), Mode: st.Mode()}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s.Sum, s.Size = SHA256Hex(b), int64(len(b))
		}
		out[rel] = s
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// SHA256Hex hashes b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ContentOf drops mtimes and directories: what a file-level comparison of
// two partitions looks at.
func ContentOf(s map[string]Snap) map[string]string {
	out := map[string]string{}
	for k, v := range s {
		if !v.Mode.IsDir() {
			out[k] = v.Sum
		}
	}
	return out
}

// DiffSnaps lists what differs between two snapshots (with withMtime,
// modification times too).
func DiffSnaps(a, b map[string]Snap, withMtime bool) []string {
	var d []string
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok:
			d = append(d, "gone: "+k)
		case va.Sum != vb.Sum:
			d = append(d, "content: "+k)
		case withMtime && !va.Mtime.Equal(vb.Mtime):
			d = append(d, "mtime: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "new: "+k)
		}
	}
	slices.Sort(d)
	return d
}

// AssertUnchanged fails unless dir is exactly as before, mtimes included.
func AssertUnchanged(tb testing.TB, before map[string]Snap, dir string) {
	tb.Helper()
	if d := DiffSnaps(before, SnapDir(tb, dir), true); len(d) > 0 {
		tb.Fatalf("%s changed: %s", dir, strings.Join(d, ", "))
	}
}

// SnapshotOffsets lists the offsets of dir's producer snapshots, in
// order, as the partition directory is opened.
func SnapshotOffsets(tb testing.TB, dir string) []int64 {
	tb.Helper()
	pd := segtest.OpenDir(tb, dir)
	var offs []int64
	for _, s := range pd.Snapshots {
		offs = append(offs, s.Offset)
	}
	return offs
}

// CopyTree copies a directory tree (segtest.CopyTree), failing tb on an
// error.
func CopyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := segtest.CopyTree(src, dst); err != nil {
		tb.Fatal(err)
	}
}

// RewriteJournal rewrites the journal of the interrupted edit in dir
// through tamper, as anyone who can write into a partition directory
// can: its header (the JSON object it starts with) is tampered with; the
// records appended after it are kept as they are.
func RewriteJournal(tb testing.TB, dir string, tamper func(j map[string]any)) {
	tb.Helper()
	jp := filepath.Join(dir, edit.JournalName)
	if _, err := os.Lstat(jp); err != nil {
		jp = filepath.Join(dir, edit.LegacyJournalName)
	}
	var j map[string]any
	b, err := os.ReadFile(jp)
	if err != nil {
		tb.Fatalf("journal: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&j); err != nil {
		tb.Fatalf("journal: %v", err)
	}
	rest := b[dec.InputOffset():]
	tamper(j)
	if b, err = json.Marshal(j); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(jp, append(b, rest...), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ErrCrash is the error a FaultAt hook stops a run with.
var ErrCrash = errors.New("simulated crash")

// FaultAt returns an edit.Options.FaultAt hook that fails the n-th call
// (0-based), as a crash there would.
func FaultAt(n int) func(string) error {
	i := 0
	return func(string) error {
		defer func() { i++ }()
		if i == n {
			return ErrCrash
		}
		return nil
	}
}

// KafkaFiles is a partition's file contents without kseg's own journal
// and staged files; nothing when dir does not exist.
func KafkaFiles(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return map[string]string{}
	}
	out := ContentOf(SnapDir(tb, dir))
	for k := range out {
		if edit.IsJournal(k) || strings.HasSuffix(k, edit.StagedSuffix) {
			delete(out, k)
		}
	}
	return out
}

// AssertOldOrNew: after a fault at step i, every Kafka file of the
// partition holds exactly its content from before the operation or from
// after it, never anything in between.
func AssertOldOrNew(tb testing.TB, i int, step string, before, after, cur map[string]string) {
	tb.Helper()
	names := map[string]bool{}
	for _, m := range []map[string]string{before, after, cur} {
		for k := range m {
			names[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if cur[k] != before[k] && cur[k] != after[k] {
			tb.Fatalf("step %d (%s): %s is neither its old nor its new content", i, step, k)
		}
	}
}

// IsRefusal reports whether err is a write command's refusal
// (*edit.RefusalError) for reason.
func IsRefusal(err error, reason edit.Reason) bool {
	var re *edit.RefusalError
	return errors.As(err, &re) && re.Reason == reason
}

// Staged copies the partition directory src into a new log directory
// under tb's temporary directory, with the files of src's log directory a
// broker reads for it (kafkaoracle.Stage), and returns the copy's path;
// tb fails when it cannot be made.
func Staged(tb testing.TB, src string) string {
	tb.Helper()
	dir, err := kafkaoracle.Stage(src, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}
