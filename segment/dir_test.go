package segment

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/decode/decodetest/testkit"
)

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenPartitionDirSynthetic(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "orders-3")
	touch(t, dir,
		"00000000000000000100.log", "00000000000000000100.index", "00000000000000000100.timeindex", "00000000000000000100.txnindex",
		"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
		"00000000000000000200.index", // orphan index: reported, Log empty
		"00000000000000000200.snapshot", "00000000000000000100.snapshot",
		"00000000000000000050.log.deleted", "00000000000000000050.snapshot.deleted",
		"00000000000000000000.log.cleaned", "00000000000000000000.log.swap", "leader-epoch-checkpoint.tmp",
		"leader-epoch-checkpoint", "partition.metadata",
		"7.log", "notes.txt", "sub/x",
	)
	d, err := OpenPartitionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	j := func(n string) string { return filepath.Join(dir, n) }
	if d.Topic != "orders" || d.Partition != 3 || d.State != DirLive || d.Path != dir {
		t.Errorf("identity = %q %d %v %q", d.Topic, d.Partition, d.State, d.Path)
	}
	wantSegs := []SegmentFiles{
		{BaseOffset: 0, Log: j("00000000000000000000.log"), Index: j("00000000000000000000.index"), TimeIndex: j("00000000000000000000.timeindex")},
		{BaseOffset: 100, Log: j("00000000000000000100.log"), Index: j("00000000000000000100.index"), TimeIndex: j("00000000000000000100.timeindex"), TxnIndex: j("00000000000000000100.txnindex")},
		{BaseOffset: 200, Index: j("00000000000000000200.index")},
	}
	if !reflect.DeepEqual(d.Segments, wantSegs) {
		t.Errorf("Segments = %+v\nwant %+v", d.Segments, wantSegs)
	}
	wantSnaps := []SnapshotFile{{100, j("00000000000000000100.snapshot")}, {200, j("00000000000000000200.snapshot")}}
	if !reflect.DeepEqual(d.Snapshots, wantSnaps) {
		t.Errorf("Snapshots = %+v", d.Snapshots)
	}
	if d.LeaderEpochCheckpoint != j("leader-epoch-checkpoint") || d.PartitionMetadata != j("partition.metadata") {
		t.Errorf("checkpoints = %q %q", d.LeaderEpochCheckpoint, d.PartitionMetadata)
	}
	wantTransient := []string{
		j("00000000000000000000.log.cleaned"), j("00000000000000000000.log.swap"),
		j("00000000000000000050.log.deleted"), j("00000000000000000050.snapshot.deleted"),
		j("leader-epoch-checkpoint.tmp"),
	}
	if !reflect.DeepEqual(d.Transient, wantTransient) {
		t.Errorf("Transient = %q", d.Transient)
	}
	wantOther := []string{j("7.log"), j("notes.txt"), j("sub")}
	if !reflect.DeepEqual(d.Other, wantOther) {
		t.Errorf("Other = %q", d.Other)
	}
	if s, ok := d.Segment(100); !ok || s.TxnIndex == "" {
		t.Errorf("Segment(100) = %+v %v", s, ok)
	}
	if _, ok := d.Segment(50); ok {
		t.Error("Segment(50) found")
	}
	if d.String() == "" {
		t.Error("empty String")
	}
	if !IsPartitionDir(dir) {
		t.Error("IsPartitionDir = false")
	}
}

func TestOpenPartitionDirOddNames(t *testing.T) {
	root := t.TempDir()
	// A copy under a name that is not topic-partition still lists.
	copyDir := filepath.Join(root, "copy")
	touch(t, copyDir, "00000000000000000000.log")
	d, err := OpenPartitionDir(copyDir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Topic != "" || d.Partition != -1 || len(d.Segments) != 1 {
		t.Errorf("copy: %+v", d)
	}
	if IsPartitionDir(copyDir) {
		t.Error("IsPartitionDir(copy) = true")
	}
	del := filepath.Join(root, "orders-3.0123456789abcdef0123456789abcdef-delete")
	touch(t, del, "partition.metadata")
	d, err = OpenPartitionDir(del)
	if err != nil {
		t.Fatal(err)
	}
	if d.Topic != "orders" || d.Partition != 3 || d.State != DirDelete {
		t.Errorf("delete dir: %+v", d)
	}
	if !IsPartitionDir(del) {
		t.Error("IsPartitionDir(delete dir) = false")
	}
	// Named right but holding nothing a broker creates.
	empty := filepath.Join(root, "t-0")
	touch(t, empty, "notes.txt", "00000000000000000000.log.deleted")
	if IsPartitionDir(empty) {
		t.Error("IsPartitionDir(empty) = true")
	}
	if IsPartitionDir(filepath.Join(root, "missing-0")) {
		t.Error("IsPartitionDir(missing) = true")
	}
	if _, err := OpenPartitionDir(filepath.Join(root, "missing-0")); !os.IsNotExist(err) {
		t.Errorf("OpenPartitionDir(missing) err = %v", err)
	}
	f := filepath.Join(root, "file-0")
	touch(t, root, "file-0")
	if _, err := OpenPartitionDir(f); err == nil {
		t.Error("OpenPartitionDir(file) succeeded")
	}
}

func TestOpenLogDirSynthetic(t *testing.T) {
	root := t.TempDir()
	touch(t, root,
		"t-10/partition.metadata", "t-2/partition.metadata", "t-1/partition.metadata", "a-0/partition.metadata",
		"t-1.0123456789abcdef0123456789abcdef-delete/partition.metadata",
		"lost+found/x",
		"meta.properties", ".lock", "recovery-point-offset-checkpoint", "recovery-point-offset-checkpoint.tmp", "junk",
	)
	l, err := OpenLogDir(root)
	if err != nil {
		t.Fatal(err)
	}
	j := func(n string) string { return filepath.Join(root, n) }
	wantParts := []string{j("a-0"), j("t-1"), j("t-1.0123456789abcdef0123456789abcdef-delete"), j("t-2"), j("t-10")}
	if !reflect.DeepEqual(l.Partitions, wantParts) {
		t.Errorf("Partitions = %q", l.Partitions)
	}
	if !reflect.DeepEqual(l.OtherDirs, []string{j("lost+found")}) {
		t.Errorf("OtherDirs = %q", l.OtherDirs)
	}
	var kinds []FileKind
	for _, f := range l.Files {
		kinds = append(kinds, f.Kind)
	}
	wantKinds := []FileKind{KindLock, KindUnknown, KindMetaProperties, KindRecoveryPointCheckpoint, KindRecoveryPointCheckpoint}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("file kinds = %v", kinds)
	}
	if p, ok := l.File(KindRecoveryPointCheckpoint); !ok || p != j("recovery-point-offset-checkpoint") {
		t.Errorf("File(recovery) = %q %v", p, ok)
	}
	if _, ok := l.File(KindCleanShutdown); ok {
		t.Error("File(clean shutdown) found")
	}
	if got := LogDirOf(j("t-1") + string(filepath.Separator)); got != root {
		t.Errorf("LogDirOf = %q, want %q", got, root)
	}
	if got := LogDirOf("testing-0"); got != "." {
		t.Errorf("LogDirOf(relative) = %q", got)
	}
}

func TestOpenPartitionDirReal(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	data := filepath.Join(root, "eric-kimm__stock-market-pipeline", "kafka", "data")
	dir := filepath.Join(data, "testing-0")
	d, err := OpenPartitionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Topic != "testing" || d.Partition != 0 || d.State != DirLive {
		t.Errorf("identity = %q %d %v", d.Topic, d.Partition, d.State)
	}
	if len(d.Segments) != 2 || d.Segments[0].BaseOffset != 0 || d.Segments[1].BaseOffset != 11630 {
		t.Fatalf("Segments = %+v", d.Segments)
	}
	for _, s := range d.Segments {
		if s.Log == "" || s.Index == "" || s.TimeIndex == "" || s.TxnIndex != "" {
			t.Errorf("segment %d files = %+v", s.BaseOffset, s)
		}
	}
	if len(d.Snapshots) != 2 || d.Snapshots[0].Offset != 11630 || d.Snapshots[1].Offset != 11655 {
		t.Errorf("Snapshots = %+v", d.Snapshots)
	}
	if d.LeaderEpochCheckpoint == "" || d.PartitionMetadata == "" || len(d.Transient) != 0 || len(d.Other) != 0 {
		t.Errorf("listing = %+v", d)
	}
	if !IsPartitionDir(dir) {
		t.Error("IsPartitionDir(testing-0) = false")
	}

	meta, err := OpenPartitionDir(filepath.Join(data, "__cluster_metadata-0"))
	if err != nil {
		t.Fatal(err)
	}
	wantMS := []MetadataSnapshotFile{
		{83088, 7, filepath.Join(data, "__cluster_metadata-0", "00000000000000083088-0000000007.checkpoint")},
		{194445, 15, filepath.Join(data, "__cluster_metadata-0", "00000000000000194445-0000000015.checkpoint")},
	}
	if !reflect.DeepEqual(meta.MetadataSnapshots, wantMS) {
		t.Errorf("MetadataSnapshots = %+v", meta.MetadataSnapshots)
	}
	if len(meta.Other) != 1 || filepath.Base(meta.Other[0]) != QuorumStateName {
		t.Errorf("Other = %q", meta.Other)
	}

	l, err := OpenLogDir(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(data, "__cluster_metadata-0"), filepath.Join(data, "stock-trades-0"), dir}
	if !reflect.DeepEqual(l.Partitions, want) {
		t.Errorf("Partitions = %q", l.Partitions)
	}
	if len(l.Files) != 7 || len(l.OtherDirs) != 0 {
		t.Errorf("Files = %+v, OtherDirs = %q", l.Files, l.OtherDirs)
	}
	for _, f := range l.Files {
		if f.Kind == KindUnknown {
			t.Errorf("unknown root file %s", f.Name)
		}
	}
	if LogDirOf(dir) != data {
		t.Errorf("LogDirOf = %q", LogDirOf(dir))
	}
}

// TestOpenLogDirSymlinkedPartition: a partition directory moved to another
// disk and linked back is a partition (LogManager.loadLogs follows the
// link with File.isDirectory); a link to a file stays a file.
func TestOpenLogDirSymlinkedPartition(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	touch(t, elsewhere, "t-3/00000000000000000000.log", "plain")
	ld := filepath.Join(root, "logs")
	touch(t, ld, "t-0/00000000000000000000.log")
	if err := os.Symlink(filepath.Join(elsewhere, "t-3"), filepath.Join(ld, "t-3")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "plain"), filepath.Join(ld, "meta.properties")); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLogDir(ld)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(ld, "t-0"), filepath.Join(ld, "t-3")}
	if !reflect.DeepEqual(l.Partitions, want) {
		t.Errorf("Partitions = %q, want %q", l.Partitions, want)
	}
	if len(l.Files) != 1 || l.Files[0].Kind != KindMetaProperties {
		t.Errorf("Files = %+v, want the linked meta.properties", l.Files)
	}
}

// TestPartitionDirLogs: Logs yields the segments with a .log, in order,
// and stops when the loop does.
func TestPartitionDirLogs(t *testing.T) {
	d := &PartitionDir{Segments: []SegmentFiles{
		{BaseOffset: 0, Log: "0.log"}, {BaseOffset: 5, Index: "5.index"}, {BaseOffset: 9, Log: "9.log"}, {BaseOffset: 12, Log: "12.log"},
	}}
	var got []int64
	for s := range d.Logs() {
		got = append(got, s.BaseOffset)
	}
	if !reflect.DeepEqual(got, []int64{0, 9, 12}) {
		t.Errorf("Logs yielded %v, want [0 9 12]", got)
	}
	for s := range d.Logs() {
		if s.BaseOffset == 9 {
			break
		}
	}
}
