package cmd

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdataAbs is ../testdata, resolved before any test changes directory.
var testdataAbs = mustAbs(testdataDir)

// copyFixture copies testdata/<kind>/<name> into a temporary directory and
// changes into it, so paths in the output are relative.
func copyFixture(t *testing.T, kind, name string) string {
	t.Helper()
	src := filepath.Join(testdataAbs, kind, name)
	work := t.TempDir()
	copyTree(t, src, filepath.Join(work, filepath.Base(name)))
	t.Chdir(work)
	return filepath.Base(name)
}

// TestKafkaIgnoresUnknownFiles: DumpLogSegments prints "Dumping <file>"
// for every file, then "Ignoring unknown file <file>" on stderr for any
// name whose suffix from the last "." it does not dispatch.
func TestKafkaIgnoresUnknownFiles(t *testing.T) {
	dir := copyFixture(t, "partitions", "txn-0")
	extra := []string{"meta.properties", "quorum-state", "00000000000000000000.index.swap",
		"00000000000000000000.log.deleted", "00000000000000000000.timeindex.cleaned"}
	for _, n := range extra {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ignored := append([]string{"leader-epoch-checkpoint", "partition.metadata"}, extra...)
	var files []string
	for _, n := range ignored {
		files = append(files, filepath.Join(dir, n))
	}
	r := runKseg(append([]string{"dump", "-o", "kafka"}, files...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, f := range files {
		if !strings.Contains(r.stdout, "Dumping "+f+"\n") {
			t.Errorf("no Dumping line for %s:\n%s", f, r.stdout)
		}
		if !strings.Contains(r.stderr, "Ignoring unknown file "+f+"\n") {
			t.Errorf("no Ignoring line for %s:\n%s", f, r.stderr)
		}
	}
	if strings.Count(r.stdout, "\n") != len(files) {
		t.Errorf("stdout has more than the Dumping lines:\n%s", r.stdout)
	}
}

// TestKafkaTxnIndexVersion: AbortedTxn.version() reads the high byte of
// the stored int16, and kafka-dump-log prints that.
func TestKafkaTxnIndexVersion(t *testing.T) {
	dir := copyFixture(t, "partitions", "txn-0")
	p := filepath.Join(dir, "00000000000000000011.txnindex")
	b, err := os.ReadFile(p)
	if err != nil || len(b) < 34 {
		t.Fatalf("%v (%d bytes)", err, len(b))
	}
	binary.BigEndian.PutUint16(b, 0x0005) // low byte set: Kafka still reads version 0
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runKseg("dump", "-o", "kafka", p)
	first, _, _ := strings.Cut(strings.SplitN(r.stdout, "\n", 3)[1], " producerId")
	if first != "version: 0" {
		t.Errorf("got %q, want version: 0\n%s", first, r.stdout)
	}
}

// TestKafkaSpellings: dump takes kafka-dump-log's option names, and
// kseg kafka-dump-log takes its whole command line, with its exit codes.
func TestKafkaSpellings(t *testing.T) {
	dir := copyFixture(t, "partitions", "txn-0")
	log0, log11 := filepath.Join(dir, "00000000000000000000.log"), filepath.Join(dir, "00000000000000000011.log")
	want := runKseg("dump", "-o", "kafka", "--deep", "--print-data", log0, log11)
	for _, args := range [][]string{
		{"dump", "-o", "kafka", "--deep-iteration", "--print-data-log", "--files", log0 + "," + log11},
		{"dump", "-o", "kafka", "--print-data-log", "--max-message-size", "100", "--files", log0, "--files", log11},
		{"kafka-dump-log", "--deep-iteration", "--print-data-log", "--files", log0 + "," + log11},
		{"kafka-dump-log", "--print-data-log", "--max-bytes", "2147483647", "--files", log0 + "," + log11},
		{"kafka-dump-log", "--value-decoder-class", "org.apache.kafka.tools.api.StringDecoder", "--files", log0 + "," + log11},
	} {
		got := runKseg(args...)
		if got.code != 0 || got.stdout != want.stdout {
			t.Errorf("kseg %s: exit %d\n%s", strings.Join(args, " "), got.code, firstDiff(want.stdout, got.stdout))
		}
	}
	r := runKseg("kafka-dump-log", "--deep-iteration")
	if r.code != 1 || !strings.HasPrefix(r.stderr, `Missing required argument "[files]"`) || !strings.Contains(r.stderr, "--files") {
		t.Errorf("no --files: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runKseg("kafka-dump-log", "--no-such-option", "--files", log0); r.code != 1 {
		t.Errorf("bad option: exit %d, want 1 as kafka-dump-log", r.code)
	}
	if r := runKseg("kafka-dump-log", "--key-decoder-class", "com.example.MyDecoder", "--files", log0); r.code != 1 {
		t.Errorf("unknown decoder class: exit %d, want 1", r.code)
	}
	// A CRC mismatch is isvalid: false and exit 0 in Kafka; kseg dump says 3.
	t.Chdir(t.TempDir())
	bad := copyFixture(t, "broken", "crc-mismatch/events-0")
	badLog := filepath.Join(bad, "00000000000000000000.log")
	if r := runKseg("kafka-dump-log", "--files", badLog); r.code != 0 || !strings.Contains(r.stdout, "isvalid: false") {
		t.Errorf("crc mismatch: exit %d\n%s", r.code, r.stdout)
	}
	if r := runKseg("dump", "-o", "kafka", "--files", badLog); r.code != ExitFindings {
		t.Errorf("dump crc mismatch: exit %d, want 3", r.code)
	}
}

// TestKafkaDecoderClasses: Kafka's built-in decoders, by value.
func TestKafkaDecoderClasses(t *testing.T) {
	for _, c := range []struct {
		class string
		in    []byte
		want  string
	}{
		{"org.apache.kafka.tools.api.IntegerDecoder", []byte{0xff, 0xff, 0xff, 0xfe}, "-2"},
		{"IntegerDecoder", []byte{0, 0, 1, 0, 9}, "256"}, // getInt reads the first four bytes
		{"kafka.serializer.LongDecoder", []byte{0, 0, 0, 0, 0, 0, 0x30, 0x39}, "12345"},
		{"LongDecoder", []byte{1, 2}, "java.nio.BufferUnderflowException"},
		{"StringDecoder", []byte{'a', 0xff, 'b'}, "a\uFFFDb"},
		{"", []byte("plain"), "plain"},
	} {
		d, err := parseKafkaDecoder(c.class)
		if err != nil {
			t.Fatalf("%s: %v", c.class, err)
		}
		if got := string(d.appendDecoded(nil, c.in)); got != c.want {
			t.Errorf("%s(%x) = %q, want %q", c.class, c.in, got, c.want)
		}
	}
	d, _ := parseKafkaDecoder("DefaultDecoder")
	a, b := string(d.appendDecoded(nil, []byte("x"))), string(d.appendDecoded(nil, []byte("y")))
	if !strings.HasPrefix(a, "[B@") || a == b {
		t.Errorf("DefaultDecoder: %q %q", a, b)
	}
	if _, err := parseKafkaDecoder("com.example.Custom"); err == nil {
		t.Error("a custom class was accepted")
	}
}
