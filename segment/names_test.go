package segment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/segtest/realdata"
)

// realManifest returns the files the fixtures README's SHA-256 lists name
// (both sets), as a set of slash-separated relative paths.
func realManifest(t *testing.T, root string) map[string]bool {
	t.Helper()
	files, err := realdata.Manifest(root)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range files {
		out[f] = true
	}
	return out
}

// countManifest counts the manifest files whose base name satisfies keep.
func countManifest(m map[string]bool, keep func(name string) bool) int {
	n := 0
	for f := range m {
		if keep(f[strings.LastIndex(f, "/")+1:]) {
			n++
		}
	}
	return n
}

// wantCorrupt asserts err is a *decode.CorruptError with the given field,
// position and class.
func wantCorrupt(t *testing.T, err error, field string, pos int64, class error) *decode.CorruptError {
	t.Helper()
	ce, ok := decode.AsCorrupt(err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *decode.CorruptError", err, err)
	}
	if ce.Field != field || ce.Pos != pos {
		t.Errorf("field/pos = %q/%d, want %q/%d (%v)", ce.Field, ce.Pos, field, pos, err)
	}
	if !errors.Is(err, class) {
		t.Errorf("error %v does not wrap %v", err, class)
	}
	if ce.BaseOffset != decode.NoBaseOffset {
		t.Errorf("BaseOffset = %d, want NoBaseOffset", ce.BaseOffset)
	}
	return ce
}

func TestFormatOffset(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "00000000000000000000"},
		{11630, "00000000000000011630"},
		{9223372036854775807, "09223372036854775807"},
	} {
		if got := FormatOffset(c.in); got != c.want {
			t.Errorf("FormatOffset(%d) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := SegmentFileName(5579, SnapshotSuffix); got != "00000000000000005579.snapshot" {
		t.Errorf("SegmentFileName = %q", got)
	}
	if got := MetadataSnapshotName(83088, 7); got != "00000000000000083088-0000000007.checkpoint" {
		t.Errorf("MetadataSnapshotName = %q", got)
	}
}

func TestParseFileName(t *testing.T) {
	for _, c := range []struct {
		name      string
		ok        bool
		kind      FileKind
		offset    int64
		epoch     int32
		suffix    string
		canonical bool
	}{
		{"00000000000000000000.log", true, KindLog, 0, -1, "", true},
		{"00000000000000011630.index", true, KindIndex, 11630, -1, "", true},
		{"00000000000000011630.timeindex", true, KindTimeIndex, 11630, -1, "", true},
		{"00000000000000000100.txnindex", true, KindTxnIndex, 100, -1, "", true},
		{"00000000000000005579.snapshot", true, KindProducerSnapshot, 5579, -1, "", true},
		{"00000000000000000000.log.deleted", true, KindLog, 0, -1, DeletedSuffix, true},
		{"00000000000000000000.index.cleaned", true, KindIndex, 0, -1, CleanedSuffix, true},
		{"00000000000000000042.timeindex.swap", true, KindTimeIndex, 42, -1, SwapSuffix, true},
		{"00000000000000000042.txnindex.swap", true, KindTxnIndex, 42, -1, SwapSuffix, true},
		{"00000000000000000042.snapshot.deleted", true, KindProducerSnapshot, 42, -1, DeletedSuffix, true},
		{"42.log", true, KindLog, 42, -1, "", false},                                           // offsetFromFileName accepts it
		{"09223372036854775807.log", true, KindLog, 9223372036854775807, -1, "", true},         // max int64
		{"09223372036854775808.log", false, KindUnknown, -1, -1, "", false},                    // overflows
		{"-0000000000000000001.log", false, KindUnknown, -1, -1, "", false},                    // signs are never written
		{"00000000000000000000.logx", false, KindUnknown, -1, -1, "", false},                   // unknown suffix
		{"00000000000000000000.log.tmp", false, KindUnknown, -1, -1, "", false},                // not a Kafka temp name
		{".log", false, KindUnknown, -1, -1, "", false},                                        // no offset
		{"0000000000000000000a.log", false, KindUnknown, -1, -1, "", false},                    // not digits
		{"00000000000000000000.deleted", false, KindUnknown, -1, -1, "", false},                // suffix without kind
		{"leader-epoch-checkpoint", true, KindLeaderEpochCheckpoint, -1, -1, "", true},         //
		{"leader-epoch-checkpoint.tmp", true, KindLeaderEpochCheckpoint, -1, -1, ".tmp", true}, //
		{"partition.metadata", true, KindPartitionMetadata, -1, -1, "", true},
		{"partition.metadata.tmp", true, KindPartitionMetadata, -1, -1, ".tmp", true},
		{"recovery-point-offset-checkpoint", true, KindRecoveryPointCheckpoint, -1, -1, "", true},
		{"log-start-offset-checkpoint", true, KindLogStartOffsetCheckpoint, -1, -1, "", true},
		{"replication-offset-checkpoint", true, KindReplicationOffsetCheckpoint, -1, -1, "", true},
		{"cleaner-offset-checkpoint", true, KindCleanerOffsetCheckpoint, -1, -1, "", true},
		{"meta.properties", true, KindMetaProperties, -1, -1, "", true},
		{".kafka_cleanshutdown", true, KindCleanShutdown, -1, -1, "", true},
		{"bootstrap.checkpoint", true, KindBootstrapCheckpoint, -1, -1, "", true},
		{"quorum-state", true, KindQuorumState, -1, -1, "", true},
		{".lock", true, KindLock, -1, -1, "", true},
		{".lock.tmp", false, KindUnknown, -1, -1, "", false},
		{"00000000000000083088-0000000007.checkpoint", true, KindMetadataSnapshot, 83088, 7, "", true},
		{"00000000000000194445-0000000015.checkpoint", true, KindMetadataSnapshot, 194445, 15, "", true},
		{"00000000000000194445-0000000015.checkpoint.deleted", true, KindMetadataSnapshot, 194445, 15, DeletedSuffix, true},
		{"00000000000000194445-0000000015-123456789.checkpoint.part", true, KindMetadataSnapshot, 194445, 15, PartialSuffix, true},
		{"00000000000000194445-0000000015.checkpointx", false, KindUnknown, -1, -1, "", false},
		{"00000000000000194445-9999999999.checkpoint", false, KindUnknown, -1, -1, "", false}, // epoch overflows int32
		{"0000000000000019444-0000000015.checkpoint", false, KindUnknown, -1, -1, "", false},  // 19-digit offset
		{"README", false, KindUnknown, -1, -1, "", false},
		{"", false, KindUnknown, -1, -1, "", false},
	} {
		fi, ok := ParseFileName(c.name)
		if ok != c.ok || fi.Kind != c.kind || fi.Offset != c.offset || fi.Epoch != c.epoch || fi.Suffix != c.suffix || fi.Canonical != c.canonical {
			t.Errorf("ParseFileName(%q) = %+v, %v; want kind %v offset %d epoch %d suffix %q canonical %v ok %v",
				c.name, fi, ok, c.kind, c.offset, c.epoch, c.suffix, c.canonical, c.ok)
		}
		if fi.Name != c.name {
			t.Errorf("ParseFileName(%q).Name = %q", c.name, fi.Name)
		}
		if fi.Transient() != (c.suffix != "") {
			t.Errorf("ParseFileName(%q).Transient() = %v", c.name, fi.Transient())
		}
	}
}

func TestFileKindString(t *testing.T) {
	if KindLog.String() != "log" || KindProducerSnapshot.String() != "snapshot" || KindCleanShutdown.String() != ".kafka_cleanshutdown" {
		t.Errorf("kind names: %v %v %v", KindLog, KindProducerSnapshot, KindCleanShutdown)
	}
	if FileKind(99).String() != "FileKind(99)" {
		t.Errorf("out of range: %v", FileKind(99))
	}
	for k := KindUnknown; k <= KindLock; k++ {
		if k.String() == "" {
			t.Errorf("kind %d has no name", int(k))
		}
	}
}

func TestParsePartitionDir(t *testing.T) {
	for _, c := range []struct {
		name  string
		ok    bool
		topic string
		part  int32
		state DirState
		uid   string
	}{
		{"testing-0", true, "testing", 0, DirLive, ""},
		{"__consumer_offsets-39", true, "__consumer_offsets", 39, DirLive, ""},
		{"__cluster_metadata-0", true, "__cluster_metadata", 0, DirLive, ""},
		{"my-topic-12", true, "my-topic", 12, DirLive, ""},
		{"_confluent-ksql-default__command_topic-0", true, "_confluent-ksql-default__command_topic", 0, DirLive, ""},
		{"a.b-2147483647", true, "a.b", 2147483647, DirLive, ""},
		{"t-+1", true, "t", 1, DirLive, ""}, // Integer.parseInt accepts a plus sign
		{"orders-3.0123456789abcdef0123456789abcdef-delete", true, "orders", 3, DirDelete, "0123456789abcdef0123456789abcdef"},
		{"my-topic-0.0123456789abcdef0123456789abcdef-future", true, "my-topic", 0, DirFuture, "0123456789abcdef0123456789abcdef"},
		{"a.b-7.ffffffffffffffffffffffffffffffff-stray", true, "a.b", 7, DirStray, "ffffffffffffffffffffffffffffffff"},
		{"t-2147483648", false, "", 0, 0, ""}, // overflows int32
		{"t-", false, "", 0, 0, ""},
		{"-0", false, "", 0, 0, ""},
		{"topic", false, "", 0, 0, ""},
		{"topic-x", false, "", 0, 0, ""},
		{"", false, "", 0, 0, ""},
		{"foo-delete", false, "", 0, 0, ""},       // suffix but no ".uid"
		{"t-0.-delete", false, "", 0, 0, ""},      // empty uid
		{"t 1-0.abc-delete", false, "", 0, 0, ""}, // whitespace
		{"t-x.abc-delete", false, "", 0, 0, ""},   // partition not a number
		{"lost+found", false, "", 0, 0, ""},
	} {
		d, ok := ParsePartitionDir(c.name)
		if ok != c.ok || (ok && (d.Topic != c.topic || d.Partition != c.part || d.State != c.state || d.UniqueID != c.uid)) {
			t.Errorf("ParsePartitionDir(%q) = %+v, %v; want %q %d %v %q %v", c.name, d, ok, c.topic, c.part, c.state, c.uid, c.ok)
		}
		topic, part, ok2 := ParsePartitionDirName(c.name)
		if ok2 != ok || topic != d.Topic || part != d.Partition {
			t.Errorf("ParsePartitionDirName(%q) = %q %d %v", c.name, topic, part, ok2)
		}
	}
	if got := PartitionDirNameFor("stock-trades", 0); got != "stock-trades-0" {
		t.Errorf("PartitionDirNameFor = %q", got)
	}
	for s, want := range map[DirState]string{DirLive: "live", DirDelete: "delete", DirFuture: "future", DirStray: "stray", DirState(9): "DirState(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q", int(s), s.String())
		}
	}
}

// TestParseFileNameRealFixtures classifies every file in the real fixture
// tree: every name a broker wrote must be recognised.
func TestParseFileNameRealFixtures(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	manifest := realManifest(t, root)
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "README.md" || rel == "SHA256SUMS-2" {
			return nil // the fixtures' description, not broker files
		}
		if !manifest[filepath.ToSlash(rel)] {
			t.Errorf("%s: not listed in the fixtures README's SHA-256 sums", rel)
		}
		delete(manifest, filepath.ToSlash(rel))
		if strings.Contains(rel, "asayers__kafkalite"+string(filepath.Separator)+"tests"+string(filepath.Separator)+"test-data"+string(filepath.Separator)+"golden") {
			return nil
		}
		n++
		fi, ok := ParseFileName(d.Name())
		if !ok || !fi.Canonical || fi.Transient() {
			t.Errorf("%s: ParseFileName = %+v, %v", rel, fi, ok)
		}
		if fi.Kind.IsSegmentFile() || fi.Kind == KindProducerSnapshot {
			if SegmentFileName(fi.Offset, d.Name()[OffsetDigits:]) != d.Name() {
				t.Errorf("%s: name does not round-trip", rel)
			}
			if _, _, ok := ParsePartitionDirName(filepath.Base(filepath.Dir(p))); !ok {
				t.Errorf("%s: parent is not a partition directory name", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range manifest {
		t.Errorf("%s: listed in the fixtures README but not found", rel)
	}
	if n < 100 {
		t.Errorf("only %d fixture files seen", n)
	}
}
