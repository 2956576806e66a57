package kafkadumplog

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
)

// TestKafkaIgnoresUnknownFiles: DumpLogSegments prints "Dumping <file>"
// for every file, then "Ignoring unknown file <file>" on stderr for any
// name whose suffix from the last "." it does not dispatch. A name without
// a dot makes name.substring(-1) throw: kafka-dump-log stops there, and so
// does kseg for a file named on the command line; one found by expanding a
// directory (which kafka-dump-log cannot be given) is ignored instead.
func TestKafkaIgnoresUnknownFiles(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "txn-0")
	extra := []string{"meta.properties", "00000000000000000000.index.swap",
		"00000000000000000000.log.deleted", "00000000000000000000.timeindex.cleaned", "notes.txt"}
	for _, n := range append(extra, "quorum-state") {
		testkit.WriteFile(t, filepath.Join(dir, n), []byte("x"))
	}
	ignored := append([]string{"partition.metadata"}, extra...)
	var files []string
	for _, n := range ignored {
		files = append(files, filepath.Join(dir, n))
	}
	for _, cmd := range [][]string{{"dump", "-o", "kafka"}, {"kafka-dump-log", "--files", strings.Join(files, ",")}} {
		args := cmd
		if cmd[0] == "dump" {
			args = append(append([]string(nil), cmd...), files...)
		}
		r := clitest.Run(args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", cmd, r.Code, r.Stderr)
		}
		for _, f := range files {
			if !strings.Contains(r.Stdout, "Dumping "+f+"\n") {
				t.Errorf("no Dumping line for %s:\n%s", f, r.Stdout)
			}
			if !strings.Contains(r.Stderr, "Ignoring unknown file "+f+"\n") {
				t.Errorf("no Ignoring line for %s:\n%s", f, r.Stderr)
			}
		}
		if strings.Count(r.Stdout, "\n") != len(files) {
			t.Errorf("stdout has more than the Dumping lines:\n%s", r.Stdout)
		}
	}
	// Named without a dot: StringIndexOutOfBoundsException, exit 1 (kseg
	// dump: 3), and nothing after it.
	lec := filepath.Join(dir, "leader-epoch-checkpoint")
	log := filepath.Join(dir, "00000000000000000000.log")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"kafka-dump-log", "--files", lec + "," + log}, ui.ExitError},
		{[]string{"dump", "-o", "kafka", lec, log}, ui.ExitFindings},
	} {
		r := clitest.Run(c.args...)
		if r.Code != c.code || r.Stdout != "Dumping "+lec+"\n" || r.Stderr != "begin -1, end 23, length 23\n" {
			t.Errorf("kseg %s: exit %d\nstdout %q\nstderr %q", strings.Join(c.args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	// Found in a directory: ignored.
	r := clitest.Run("dump", "-o", "kafka", dir)
	if !strings.Contains(r.Stderr, "Ignoring unknown file "+lec+"\n") || !strings.Contains(r.Stderr, "Ignoring unknown file "+filepath.Join(dir, "quorum-state")+"\n") {
		t.Errorf("directory dump: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestKafkaTxnIndexVersion: AbortedTxn.version() reads the high byte of
// the stored int16, and kafka-dump-log prints that.
func TestKafkaTxnIndexVersion(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "txn-0")
	p := filepath.Join(dir, "00000000000000000011.txnindex")
	b := testkit.ReadFile(t, p)
	if len(b) < 34 {
		t.Fatalf("%s: %d bytes", p, len(b))
	}
	binary.BigEndian.PutUint16(b, 0x0005) // low byte set: Kafka still reads version 0
	testkit.WriteFile(t, p, b)
	r := clitest.Run("dump", "-o", "kafka", p)
	first, _, _ := strings.Cut(strings.SplitN(r.Stdout, "\n", 3)[1], " producerId")
	if first != "version: 0" {
		t.Errorf("got %q, want version: 0\n%s", first, r.Stdout)
	}
}

// TestKafkaSpellings: dump takes kafka-dump-log's option names, and
// kseg kafka-dump-log takes its whole command line, with its exit codes.
func TestKafkaSpellings(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "txn-0")
	log0, log11 := filepath.Join(dir, "00000000000000000000.log"), filepath.Join(dir, "00000000000000000011.log")
	want := clitest.Run("dump", "-o", "kafka", "--deep", "--print-data", log0, log11)
	for _, args := range [][]string{
		{"dump", "-o", "kafka", "--deep-iteration", "--print-data-log", "--files", log0 + "," + log11},
		{"dump", "-o", "kafka", "--print-data-log", "--max-message-size", "100", "--files", log0, "--files", log11},
		{"kafka-dump-log", "--deep-iteration", "--print-data-log", "--files", log0 + "," + log11},
		{"kafka-dump-log", "--print-data-log", "--max-bytes", "2147483647", "--files", log0 + "," + log11},
		{"kafka-dump-log", "--value-decoder-class", "org.apache.kafka.tools.api.StringDecoder", "--files", log0 + "," + log11},
	} {
		got := clitest.Run(args...)
		if got.Code != 0 || got.Stdout != want.Stdout {
			t.Errorf("kseg %s: exit %d\n%s", strings.Join(args, " "), got.Code, clitest.FirstDiff(want.Stdout, got.Stdout))
		}
	}
	r := clitest.Run("kafka-dump-log", "--deep-iteration")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, `Missing required argument "[files]"`) || !strings.Contains(r.Stderr, "--files") {
		t.Errorf("no --files: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if r := clitest.Run("kafka-dump-log", "--no-such-option", "--files", log0); r.Code != 1 {
		t.Errorf("bad option: exit %d, want 1 as kafka-dump-log", r.Code)
	}
	if r := clitest.Run("kafka-dump-log", "--key-decoder-class", "com.example.MyDecoder", "--files", log0); r.Code != 1 {
		t.Errorf("unknown decoder class: exit %d, want 1", r.Code)
	}
	// A CRC mismatch is isvalid: false and exit 0 in Kafka; kseg dump says 3.
	t.Chdir(t.TempDir())
	bad := clitest.ChdirFixture(t, "broken", "crc-mismatch/events-0")
	badLog := filepath.Join(bad, "00000000000000000000.log")
	if r := clitest.Run("kafka-dump-log", "--files", badLog); r.Code != 0 || !strings.Contains(r.Stdout, "isvalid: false") {
		t.Errorf("crc mismatch: exit %d\n%s", r.Code, r.Stdout)
	}
	if r := clitest.Run("dump", "-o", "kafka", "--files", badLog); r.Code != ui.ExitFindings {
		t.Errorf("dump crc mismatch: exit %d, want 3", r.Code)
	}
}

// TestKafkaIndexReports: --verify-index-only's reports, on stderr after all
// files, in DumpLogSegments' order and words: offset-index mismatches
// (descending index offset, as the Java port's reverse TreeMap), then the
// time index's timestamp mismatches, out-of-order timestamps (only for
// entries whose batch was found) and offsets not found.
func TestKafkaIndexReports(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "orders-0")
	idx, tidx := filepath.Join(dir, "00000000000000000000.index"), filepath.Join(dir, "00000000000000000000.timeindex")
	ib, tb := testkit.ReadFile(t, idx), testkit.ReadFile(t, tidx)
	if len(ib) != 16 || len(tb) != 36 {
		t.Fatalf("fixture changed: %d and %d bytes", len(ib), len(tb))
	}
	// .index entries (relative offset, position): 10 → 9, 20 → 19.
	binary.BigEndian.PutUint32(ib[0:], binary.BigEndian.Uint32(ib[0:])-1)
	binary.BigEndian.PutUint32(ib[8:], binary.BigEndian.Uint32(ib[8:])-1)
	// .timeindex entries (timestamp, relative offset): entry 0's
	// timestamp +1, entry 1's offset +1 (inside a batch), entry 2's
	// timestamp set to entry 0's original (below entry 1's).
	ts0 := int64(binary.BigEndian.Uint64(tb[0:]))
	ts1 := int64(binary.BigEndian.Uint64(tb[12:]))
	ts2 := int64(binary.BigEndian.Uint64(tb[24:]))
	off1 := int64(binary.BigEndian.Uint32(tb[20:])) + 1
	binary.BigEndian.PutUint64(tb[0:], uint64(ts0+1))
	binary.BigEndian.PutUint32(tb[20:], uint32(off1))
	binary.BigEndian.PutUint64(tb[24:], uint64(ts0))
	for p, b := range map[string][]byte{idx: ib, tidx: tb} {
		testkit.WriteFile(t, p, b)
	}
	// The batch that holds off1, found independently of the verifier.
	lf, err := segment.OpenLog(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{})
	holder := int64(-1)
	for sc.Next() {
		if b := sc.Batch(); holder < 0 && b.LastOffset() >= off1 {
			holder = b.LastOffset()
		}
	}
	sc.Close()
	if holder == off1 || holder < 0 {
		t.Fatalf("offset %d is a batch end (%d); pick another", off1, holder)
	}
	absIdx, _ := filepath.Abs(idx)
	absTidx, _ := filepath.Abs(tidx)
	want := strings.Join([]string{
		"Mismatches in :" + absIdx,
		"  Index offset: 19, log offset: 20",
		"  Index offset: 9, log offset: 10",
		"Found timestamp mismatch in :" + absTidx,
		fmt.Sprintf("  Index timestamp: %d, log timestamp: %d", ts0+1, ts0),
		fmt.Sprintf("  Index timestamp: %d, log timestamp: %d", ts0, ts2),
		"Found out of order timestamp in :" + absTidx,
		fmt.Sprintf("  Index timestamp: %d, Previously indexed timestamp: %d", ts0, ts1),
		"The following indexed offsets are not found in the log.",
		fmt.Sprintf("Indexed offset: %d, found log offset: %d", off1, holder),
	}, "\n") + "\n"
	r := clitest.Run("kafka-dump-log", "--verify-index-only", "--files", idx+","+tidx)
	if r.Code != 0 || r.Stderr != want {
		t.Errorf("exit %d\n got stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, want)
	}
	if r.Stdout != "Dumping "+idx+"\nDumping "+tidx+"\n" {
		t.Errorf("stdout:\n%s", r.Stdout)
	}
}

// TestKafkaEveryOption: every kafka-dump-log option, under Kafka's own
// spelling (formats.md §9.1), is taken by kseg kafka-dump-log and by kseg
// dump -o kafka, and both print the same; a decoder option or a decoder
// class turns on --print-data-log, as in Kafka.
func TestKafkaEveryOption(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "txn-0")
	log := filepath.Join(dir, "00000000000000000000.log")
	idx := filepath.Join(dir, "00000000000000000000.index")
	files := log + "," + idx
	printData := clitest.Run("kafka-dump-log", "--print-data-log", "--files", files)
	for _, opt := range [][]string{
		{"--deep-iteration"}, {"--print-data-log"}, {"--verify-index-only"}, {"--index-sanity-check"},
		{"--max-message-size", "100"}, {"--max-bytes", "1000"}, {"--skip-record-metadata"},
		{"--offsets-decoder"}, {"--transaction-log-decoder"}, {"--cluster-metadata-decoder"},
		{"--remote-log-metadata-decoder"}, {"--share-group-state-decoder"},
		{"--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder"}, {"--value-decoder-class", "kafka.serializer.LongDecoder"},
		{"--key-decoder-class"}, {"--value-decoder-class"},
	} {
		k := clitest.Run(append(append([]string{"kafka-dump-log"}, opt...), "--files", files)...)
		d := clitest.Run(append(append([]string{"dump", "-o", "kafka"}, opt...), "--files", files)...)
		if k.Code != 0 || d.Code != 0 || k.Stdout != d.Stdout || k.Stderr != d.Stderr {
			t.Errorf("%v: kafka-dump-log exit %d, dump exit %d\n%s\n%s%s", opt, k.Code, d.Code, clitest.FirstDiff(k.Stdout, d.Stdout), k.Stderr, d.Stderr)
		}
		decoder := strings.HasSuffix(opt[0], "-decoder") || strings.HasSuffix(opt[0], "-decoder-class")
		if records := strings.Contains(k.Stdout, "\n| offset: "); records != (decoder || opt[0] == "--print-data-log" || opt[0] == "--deep-iteration") {
			t.Errorf("%v: record lines %v", opt, records)
		}
		if len(opt) == 1 && strings.HasSuffix(opt[0], "-decoder-class") && k.Stdout != printData.Stdout {
			t.Errorf("%v: not --print-data-log's output\n%s", opt, clitest.FirstDiff(printData.Stdout, k.Stdout))
		}
	}
}

// TestKafkaTimeIndexEntryInsideBatch: a broker before Kafka 3.8 indexed an
// uncompressed batch's max timestamp at the offset of its first record
// carrying it, inside the batch (575 entries of the real fixtures). kseg's
// own outputs accept such an entry (segment.TimeIndexOffsetOK);
// kafka-dump-log's dumpTimeIndex finds an entry only at a batch's
// lastOffset and reports it as not found, and so does kafka output.
func TestKafkaTimeIndexEntryInsideBatch(t *testing.T) {
	const ts = int64(1700000000000)
	raw, err := decode.AppendBatch(nil, decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: ts + 5, Value: []byte("a")}, {OffsetDelta: 1, Timestamp: ts, Value: []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	tidx := binary.BigEndian.AppendUint64(nil, uint64(ts+5))
	tidx = binary.BigEndian.AppendUint32(tidx, 0) // relative offset 0: the first record, inside the batch
	for name, b := range map[string][]byte{"00000000000000000000.log": raw, "00000000000000000000.index": nil,
		"00000000000000000000.timeindex": tidx} {
		testkit.WriteFile(t, name, b)
	}
	r := clitest.Run("kafka-dump-log", "--verify-index-only", "--files", "00000000000000000000.timeindex")
	if want := "The following indexed offsets are not found in the log.\nIndexed offset: 0, found log offset: 1\n"; r.Code != 0 || r.Stderr != want {
		t.Errorf("kafka-dump-log: exit %d, stderr %q, want %q", r.Code, r.Stderr, want)
	}
	if r := clitest.Run("dump", "--verify-index", "00000000000000000000.timeindex"); r.Code != 0 || !strings.Contains(r.Stdout, "every entry matches") {
		t.Errorf("dump: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
