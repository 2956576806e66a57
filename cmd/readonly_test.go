package cmd

// The read-only guarantee (issue 7): dump, replay-psm and verify-chain (and
// explain) open every file read-only and change nothing, whatever the bytes.
//
// Making the copy read-only (files 0444, directories 0555) is not enough
// to prove it. Tests run as root in CI, and root has CAP_DAC_OVERRIDE: an
// os.OpenFile(O_RDWR) of a 0444 file, or an os.Create in a 0555
// directory, succeeds for root. So the test proves it three ways, each
// independent of who runs it:
//
//  1. Every byte, mode and mtime of every file and directory, and every
//     directory listing (the paths), is the same after the commands ran
//     (clitest.WalkState). This catches any change that happened.
//  2. On Linux, inotify watches on every directory record each open and
//     close while the commands run (readonly_linux_test.go): IN_CLOSE_WRITE
//     fires when a file that was opened for writing is closed, whether or
//     not a byte was written, and IN_CREATE, IN_DELETE, IN_MOVED_*,
//     IN_ATTRIB and IN_MODIFY for any change to names or metadata. After
//     each run no descriptor or mapping into the tree is left open (an
//     open for writing that is never closed would not fire
//     IN_CLOSE_WRITE). This catches opening for writing, even when nothing
//     was changed. Every file of the tree must have been opened read-only
//     at least once, so the check is not vacuous.
//  3. Statically (readonly_static_test.go), no function reachable from
//     the commands calls a primitive that can write (os.OpenFile with a
//     write flag, os.Create, os.Rename, a writable mmap …): this covers
//     code paths the fixtures do not reach.
//
// For a non-root run the permissions add a fourth check: a write attempt
// fails with EACCES and shows up as exit status 1.

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
)

// chmodTree makes every file 0444 and every directory 0555, and restores
// write permission on the directories at cleanup so t.TempDir can remove
// the tree when the test does not run as root.
func chmodTree(t *testing.T, root string) {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		return os.Chmod(p, 0o444)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Deepest first, so that the walk above never meets a 0555 directory.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, d := range dirs {
			_ = os.Chmod(d, 0o755)
		}
	})
}

// roFixture is the tree the read-only test runs over.
type roFixture struct {
	root       string
	logDirs    []string // arguments for dump: log directories
	partitions []string // every partition directory
	chain      [2]string
}

// buildReadOnlyFixture lays out, under one temporary root:
//
//	logs/              a log directory with the broker's root files
//	  built-0/         a partition built here with decode.AppendBatch and
//	                   segment.Appender: two segments, indexes, a .txnindex,
//	                   producer snapshots, checkpoint and metadata
//	  <fixture>-0/     copies of testdata/partitions/*, when present
//	broken/<defect>/events-0/   copies of testdata/broken/*, when present
//	mirror/built-0/    a copy of built-0, the downstream of a chain
func buildReadOnlyFixture(t *testing.T) roFixture {
	t.Helper()
	root := t.TempDir()
	logs := filepath.Join(root, "logs")
	fx := roFixture{root: root, logDirs: []string{logs}}
	built := filepath.Join(logs, "built-0")
	buildPartition(t, built)
	fx.partitions = append(fx.partitions, built)

	rootFiles := map[string][]byte{
		segment.MetaPropertiesName:              []byte("#\nnode.id=1\nversion=1\ncluster.id=Zm9vYmFyYmF6cXV4MTIzNA\ndirectory.id=XE2M0goTkGhQgA2Kte9nsA\n"),
		segment.CleanShutdownName:               []byte(`{"version":0,"brokerEpoch":42}`),
		segment.RecoveryPointCheckpointName:     segment.EncodeOffsetCheckpoint([]segment.OffsetCheckpointEntry{{Topic: "built", Partition: 0, Offset: 8}}),
		segment.LogStartOffsetCheckpointName:    segment.EncodeOffsetCheckpoint([]segment.OffsetCheckpointEntry{{Topic: "built", Partition: 0, Offset: 0}}),
		segment.ReplicationOffsetCheckpointName: segment.EncodeOffsetCheckpoint([]segment.OffsetCheckpointEntry{{Topic: "built", Partition: 0, Offset: 12}}),
		segment.CleanerOffsetCheckpointName:     segment.EncodeOffsetCheckpoint(nil),
	}
	for name, b := range rootFiles {
		testkit.WriteFile(t, filepath.Join(logs, name), b)
	}

	fx.partitions = append(fx.partitions, copyEach(t, "partitions", logs)...)
	for _, dst := range copyEach(t, "broken", filepath.Join(root, "broken")) {
		fx.logDirs = append(fx.logDirs, dst)
		parts, _ := filepath.Glob(filepath.Join(dst, "*-0"))
		fx.partitions = append(fx.partitions, parts...)
	}
	// The whole-broker views' example log directories: __consumer_offsets,
	// __transaction_state, a KRaft metadata log and snapshot.
	fx.logDirs = append(fx.logDirs, copyEach(t, "logdirs", filepath.Join(root, "logdirs"))...)
	mirror := filepath.Join(root, "mirror", "built-0")
	clitest.CopyTree(t, built, mirror)
	fx.logDirs = append(fx.logDirs, filepath.Dir(mirror))
	fx.partitions = append(fx.partitions, mirror)
	fx.chain = [2]string{built, mirror}
	return fx
}

// copyEach copies every directory of testdata/<kind> into dir and
// returns the copies. The fixtures are committed: a kind that cannot be
// read, or holds no directory, fails the test rather than quietly
// shrinking what the read-only check covers.
func copyEach(t *testing.T, kind, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(clitest.Testdata(kind))
	if err != nil {
		t.Fatal(err)
	}
	var copies []string
	for _, e := range ents {
		if e.IsDir() {
			copies = append(copies, clitest.Fixture(t, kind+"/"+e.Name(), filepath.Join(dir, e.Name())))
		}
	}
	if len(copies) == 0 {
		t.Fatalf("testdata/%s holds no fixture directory (go run ./testdata/gen)", kind)
	}
	return copies
}

// buildPartition writes a partition with decode.AppendBatch batches through
// segment.Appender (indexes every batch, a roll after 1 KiB): idempotent
// data in every codec, a committed and an aborted transaction (with its
// .txnindex entry), a MIRROR_PID_RESET barrier, producer snapshots at the
// roll and at the end, leader-epoch-checkpoint and partition.metadata.
func buildPartition(t *testing.T, dir string) {
	t.Helper()
	topicID := [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	var snaps []int64
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{SegmentBytes: 1024, IndexIntervalBytes: 1, TopicID: &topicID,
		OnRoll: func(base int64) error { snaps = append(snaps, base); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ts := int64(1700000000000)
	off := int64(0)
	seq := map[int64]int32{}
	appendBatch := func(s decode.BatchSpec, recs []decode.RecordSpec) {
		t.Helper()
		s.BaseOffset = off
		for i := range recs {
			recs[i].OffsetDelta = int32(i)
			recs[i].Timestamp = ts + off + int64(i)
		}
		if s.ProducerID >= 0 && !s.Control {
			s.BaseSequence = seq[s.ProducerID]
			seq[s.ProducerID] += int32(len(recs))
		}
		b, err := decode.AppendBatch(nil, s, recs)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Append(b); err != nil {
			t.Fatal(err)
		}
		off += int64(len(recs))
	}
	data := func(n int) []decode.RecordSpec {
		var rs []decode.RecordSpec
		for i := 0; i < n; i++ {
			rs = append(rs, decode.RecordSpec{Key: []byte{'k', byte('0' + i)}, Value: bytes.Repeat([]byte("value "), 10+i),
				Headers: []decode.Header{{Key: []byte("h"), Value: []byte{byte(i)}}}})
		}
		return rs
	}
	marker := func(typ decode.ControlType) []decode.RecordSpec {
		return []decode.RecordSpec{{Key: decode.AppendControlKey(nil, typ), Value: decode.AppendEndTxnMarkerValue(nil, 3)}}
	}
	for codec := decode.CompressionNone; codec <= decode.CompressionZstd; codec++ {
		appendBatch(decode.BatchSpec{Compression: codec, ProducerID: 1000, ProducerEpoch: 0, PartitionLeaderEpoch: 1}, data(3))
	}
	appendBatch(decode.BatchSpec{Transactional: true, ProducerID: 2000, ProducerEpoch: 1, PartitionLeaderEpoch: 1}, data(2))
	appendBatch(decode.BatchSpec{Control: true, Transactional: true, ProducerID: 2000, ProducerEpoch: 1, BaseSequence: -1, PartitionLeaderEpoch: 1}, marker(decode.ControlCommit))
	first := off
	appendBatch(decode.BatchSpec{Transactional: true, ProducerID: 2001, ProducerEpoch: 0, PartitionLeaderEpoch: 2, Compression: decode.CompressionGzip}, data(2))
	appendBatch(decode.BatchSpec{Control: true, Transactional: true, ProducerID: 2001, ProducerEpoch: 0, BaseSequence: -1, PartitionLeaderEpoch: 2}, marker(decode.ControlAbort))
	if err := a.AppendAbortedTxn(segment.AbortedTxn{ProducerID: 2001, FirstOffset: first, LastOffset: off - 1, LastStableOffset: first}); err != nil {
		t.Fatal(err)
	}
	appendBatch(decode.BatchSpec{Control: true, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: 2},
		[]decode.RecordSpec{{Key: decode.AppendControlKey(nil, decode.ControlMirrorPidReset), Value: decode.AppendMirrorPidResetValue(nil, nil)}})
	appendBatch(decode.BatchSpec{ProducerID: 1000, ProducerEpoch: 1, PartitionLeaderEpoch: 2}, data(2))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if len(snaps) == 0 {
		t.Fatal("the built partition did not roll")
	}
	// A snapshot at each roll and at the end, one entry each.
	for _, at := range append(snaps, off) {
		es := []segment.SnapshotEntry{{ProducerID: 1000, ProducerEpoch: 1, LastSequence: seq[1000] - 1, LastOffset: at - 1, Timestamp: ts + at, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}}
		if err := segment.WriteProducerSnapshotFile(filepath.Join(dir, segment.FormatOffset(at)+segment.SnapshotSuffix), es, false); err != nil {
			t.Fatal(err)
		}
	}
}

// roRun is one invocation the read-only test makes.
type roRun struct {
	args []string
	ok   []int // acceptable exit codes
}

// readOnlyRuns lists the invocations: dump with every --output and every
// reading flag over every log directory, dump of every file on its own,
// and replay-psm, explain and verify-chain where the command tree has them.
func readOnlyRuns(t *testing.T, fx roFixture) []roRun {
	var runs []roRun
	for _, out := range []string{"text", "table", "json", "kafka"} {
		args := append([]string{"dump", "--output", out, "--deep", "--print-data", "--verify-index", "--index-sanity-check"}, fx.logDirs...)
		runs = append(runs, roRun{args, []int{ui.ExitOK, ui.ExitFindings}})
	}
	var files []string
	_ = filepath.WalkDir(fx.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	runs = append(runs, roRun{append([]string{"dump", "--output", "json", "--deep", "--verify-index", "--index-sanity-check"}, files...), []int{ui.ExitOK, ui.ExitFindings}})

	s, _, _ := ui.TestStreams()
	root := NewRootCmd(s)
	sub := func(name string) *cobra.Command {
		for _, c := range root.Commands() {
			if c.Name() == name {
				return c
			}
		}
		return nil
	}
	if c := sub("replay-psm"); c != nil {
		for _, p := range fx.partitions {
			runs = append(runs, roRun{[]string{"replay-psm", p}, []int{ui.ExitOK, ui.ExitError, ui.ExitFindings}})
			if c.Flags().Lookup("check-snapshots") != nil {
				runs = append(runs, roRun{[]string{"replay-psm", "--check-snapshots", "--output", "json", p}, []int{ui.ExitOK, ui.ExitError, ui.ExitFindings}})
			}
		}
	} else {
		t.Log("replay-psm is not registered yet: not covered")
	}
	if sub("explain") != nil {
		for _, p := range fx.partitions {
			runs = append(runs, roRun{[]string{"explain", "1", p}, []int{ui.ExitOK, ui.ExitError, ui.ExitFindings}})
			runs = append(runs, roRun{[]string{"explain", "-o", "json", "0", p}, []int{ui.ExitOK, ui.ExitError, ui.ExitFindings}})
		}
	}
	for _, view := range []string{"groups", "txns", "metadata"} {
		if sub(view) == nil {
			continue
		}
		for _, out := range []string{"text", "table", "json"} {
			runs = append(runs, roRun{append([]string{view, "--output", out}, fx.logDirs...), []int{ui.ExitOK, ui.ExitFindings}})
		}
	}
	if sub("verify-chain") != nil {
		runs = append(runs, roRun{[]string{"verify-chain", fx.chain[0], fx.chain[1]}, []int{ui.ExitOK, ui.ExitFindings}})
		runs = append(runs, roRun{[]string{"verify-chain", "--output", "json", fx.chain[0], fx.chain[1]}, []int{ui.ExitOK, ui.ExitFindings}})
	} else {
		t.Log("verify-chain is not registered yet: not covered (the test picks it up once it is)")
	}
	return runs
}

// runLabel shortens a run's arguments for messages: the flags, the paths
// relative to root.
func runLabel(args []string, root string) string {
	var parts []string
	for _, a := range args {
		if rel, err := filepath.Rel(root, a); err == nil && filepath.IsAbs(a) {
			a = rel
		}
		parts = append(parts, a)
	}
	if len(parts) > 12 {
		parts = append(parts[:12], fmt.Sprintf("… (%d more)", len(parts)-12))
	}
	return strings.Join(parts, " ")
}

// TestReadOnlyCommands runs the reading commands over a read-only copy of
// every fixture and proves nothing was written or opened for writing (see
// the file comment).
func TestReadOnlyCommands(t *testing.T) {
	fx := buildReadOnlyFixture(t)
	chmodTree(t, fx.root)
	if os.Geteuid() == 0 {
		t.Log("running as root: permission bits do not stop writes; relying on the state comparison, inotify and the static check")
	}
	before := clitest.WalkState(t, fx.root)
	w := watchTree(t, fx.root)
	w.drain(t) // the events of WalkState's own reads
	opened := map[string]bool{}
	runs := readOnlyRuns(t, fx)
	t.Logf("%d runs over %d partitions", len(runs), len(fx.partitions))
	for _, r := range runs {
		res := clitest.Run(r.args...)
		name := runLabel(r.args, fx.root)
		if !slices.Contains(r.ok, res.Code) {
			t.Errorf("%s: exit %d\nstderr: %s", name, res.Code, res.Stderr)
		}
		for _, bad := range []string{"permission denied", "read-only file system", "operation not permitted"} {
			if strings.Contains(strings.ToLower(res.Stderr), bad) {
				t.Errorf("%s: %q on stderr: something tried to write\n%s", name, bad, res.Stderr)
			}
		}
		if res.Stdout == "" {
			t.Errorf("%s: no output", name)
		}
		for _, ev := range w.drain(t) {
			if ev.write() {
				t.Errorf("%s: %s", name, ev)
			} else if ev.readClose() {
				opened[ev.path] = true
			}
		}
		w.checkNothingOpen(t, fx.root, name)
	}
	if diffs := clitest.DiffState(before, clitest.WalkState(t, fx.root)); len(diffs) > 0 {
		t.Errorf("the read-only tree changed:\n%s", strings.Join(diffs, "\n"))
	}
	if w.enabled() {
		for rel, e := range before {
			if e.Mode.IsRegular() && !opened[filepath.Join(fx.root, rel)] {
				t.Errorf("%s was never opened: the check does not cover it", rel)
			}
		}
	}
}
