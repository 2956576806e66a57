package dump

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
)

// The places where kafka-dump-log throws (segment/scan/dumplog.go), each with
// both command lines: the lines before the exception, its message on
// stderr, exit 1 (kseg dump: 3), and nothing after it: no later file, no
// "Found N invalid bytes", no end-of-run report.

// kafkaBoth runs args as kseg kafka-dump-log --files f1,f2… and as kseg
// dump -o kafka f1 f2 …, and checks both end as Kafka ends.
func kafkaBoth(t *testing.T, flags []string, files []string, wantOut, wantErr string) {
	t.Helper()
	for _, c := range []struct {
		args []string
		code int
	}{
		{append(append([]string{"kafka-dump-log"}, flags...), "--files", strings.Join(files, ",")), ui.ExitError},
		{append(append([]string{"dump", "-o", "kafka"}, flags...), files...), ui.ExitFindings},
	} {
		r := clitest.Run(c.args...)
		if r.Code != c.code || r.Stdout != wantOut || r.Stderr != wantErr {
			t.Errorf("kseg %s: exit %d (want %d)\nstdout: %s\nstderr: %q\nwant stderr: %q",
				strings.Join(c.args, " "), r.Code, c.code, clitest.FirstDiff(wantOut, r.Stdout), r.Stderr, wantErr)
		}
	}
}

// linesOf is the kafka output of a healthy run, cut after the line that
// starts with upTo.
func linesOf(t *testing.T, args []string, upTo string) string {
	t.Helper()
	r := clitest.Run(args...)
	i := strings.Index(r.Stdout, upTo)
	if i < 0 {
		t.Fatalf("no %q in\n%s", upTo, r.Stdout)
	}
	j := strings.IndexByte(r.Stdout[i:], '\n')
	return r.Stdout[:i+j+1]
}

// TestKafkaStopsAtZeroTail: FileLogInputStream reads the header of a
// zero-filled tail longer than 17 bytes and throws on its size 0.
func TestKafkaStopsAtZeroTail(t *testing.T) {
	dir := clitest.ChdirFixture(t, "broken", "zero-tail/events-0")
	log := filepath.Join(dir, "00000000000000000000.log")
	idx := filepath.Join(dir, "00000000000000000000.index")
	want := linesOf(t, []string{"dump", "-o", "kafka", "--no-verify-crc", log}, "baseOffset: 10 ")
	kafkaBoth(t, nil, []string{log, idx}, want,
		"Found record size 0 smaller than minimum record overhead (14) in file "+log+".\n")

	// 17 zero bytes or fewer: nextBatch returns null, the tail is
	// reported as invalid bytes and the dump goes on.
	b, _ := os.ReadFile(log)
	if err := os.WriteFile(log, b[:646+17], 0o644); err != nil {
		t.Fatal(err)
	}
	r := clitest.Run("kafka-dump-log", "--files", log+","+idx)
	if r.Code != 0 || !strings.Contains(r.Stdout, "Found 17 invalid bytes at the end of 00000000000000000000.log\nDumping "+idx+"\n") {
		t.Errorf("17-byte tail: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A size below 14 that is not zero: the same exception, with it.
	binary.BigEndian.PutUint32(b[646+8:], 13)
	if err := os.WriteFile(log, b[:646+40], 0o644); err != nil {
		t.Fatal(err)
	}
	kafkaBoth(t, nil, []string{log}, want, "Found record size 13 smaller than minimum record overhead (14) in file "+log+".\n")
}

// TestKafkaReadsFutureMagicAsV2: FileLogInputStream reads a batch whose
// magic is above 2 as a DefaultRecordBatch, and the dump goes on past it.
func TestKafkaReadsFutureMagicAsV2(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "txn-0")
	log := filepath.Join(dir, "00000000000000000000.log")
	b, _ := os.ReadFile(log)
	b[16] = 3 // the first batch; the magic is not covered by the crc
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"kafka-dump-log", "--deep-iteration", "--files", log}, {"dump", "-o", "kafka", "--deep", log}} {
		r := clitest.Run(args...)
		first := strings.Split(r.Stdout, "\n")[2]
		if r.Code != 0 || r.Stderr != "" || !strings.Contains(first, " position: 0 ") || !strings.Contains(first, " magic: 3 ") ||
			!strings.Contains(first, "isvalid: true") || !strings.Contains(r.Stdout, "\n| offset: 1 ") || !strings.Contains(r.Stdout, "endTxnMarker: COMMIT") {
			t.Errorf("kseg %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	// text and json keep kseg's finding.
	if r := clitest.Run("dump", log); r.Code != ui.ExitFindings || !strings.Contains(r.Stdout+r.Stderr, "invalid magic 3") {
		t.Errorf("text: exit %d\n%s", r.Code, r.Stdout)
	}
}

// TestKafkaStopsAtNegativeCount: under deep iteration DefaultRecordBatch's
// RecordIterator throws on a negative count, after the batch line; without
// it the batch line shows the count and the dump goes on.
func TestKafkaStopsAtNegativeCount(t *testing.T) {
	dir := clitest.ChdirFixture(t, "broken", "negative-count/events-0")
	log := filepath.Join(dir, "00000000000000000000.log")
	idx := filepath.Join(dir, "00000000000000000000.index")
	want := linesOf(t, []string{"kafka-dump-log", "--files", log}, "baseOffset: 4 ")
	// The records of the batches before, as deep iteration prints them.
	deep := clitest.Run("kafka-dump-log", "--deep-iteration", "--files", log)
	want = deep.Stdout[:strings.Index(deep.Stdout, "baseOffset: 4 ")] + want[strings.Index(want, "baseOffset: 4 "):]
	kafkaBoth(t, []string{"--deep-iteration"}, []string{log, idx}, want, "Found invalid record count -1 in magic v2 batch\n")
	if r := clitest.Run("kafka-dump-log", "--files", log+","+idx); r.Code != 0 || !strings.Contains(r.Stdout, "count: -1 ") || !strings.Contains(r.Stdout, "Dumping "+idx) {
		t.Errorf("shallow: exit %d\n%s", r.Code, r.Stdout)
	}
}

// TestKafkaCompressedBatchFailsWhole: a compressed batch is decompressed
// and read whole before its first record is printed, so a record that
// does not decode leaves no record line of that batch; an uncompressed
// batch prints the records before the bad one.
func TestKafkaCompressedBatchFailsWhole(t *testing.T) {
	recs := []decode.RecordSpec{{Timestamp: 1700000000000, Value: []byte("a")}, {OffsetDelta: 1, Timestamp: 1700000000001, Value: []byte("b")}}
	for _, c := range []struct {
		codec decode.Compression
		want  int // record lines printed
	}{{decode.CompressionNone, 2}, {decode.CompressionGzip, 0}} {
		raw, err := decode.AppendBatch(nil, decode.BatchSpec{Compression: c.codec, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint32(raw[decode.RecordBatchOverhead-4:], 3) // three records, two there
		binary.BigEndian.PutUint32(raw[17:], decode.CRC32C(raw[21:]))
		t.Chdir(t.TempDir())
		if err := os.WriteFile("00000000000000000000.log", raw, 0o644); err != nil {
			t.Fatal(err)
		}
		// Rendered on the dump goroutine and on workers.
		for _, workers := range []string{"1", "3"} {
			r := clitest.Run("dump", "-o", "kafka", "--decode-workers", workers, "--deep", "00000000000000000000.log")
			if n := strings.Count(r.Stdout, "\n| offset: "); r.Code != ui.ExitFindings || n != c.want || r.Stderr == "" || strings.Count(r.Stderr, "\n") != 1 {
				t.Errorf("%s, %s workers: exit %d, %d record lines (want %d)\n%s%s", c.codec, workers, r.Code, n, c.want, r.Stdout, r.Stderr)
			}
		}
	}
}

// TestKafkaSanityCheckOnly: with --index-sanity-check, dumpIndex and
// dumpTimeIndex return after "passed sanity check." (no entries, no
// verification); a failed check throws CorruptIndexException.
func TestKafkaSanityCheckOnly(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "orders-0")
	idx := filepath.Join(dir, "00000000000000000000.index")
	tidx := filepath.Join(dir, "00000000000000000000.timeindex")
	for _, extra := range [][]string{nil, {"--verify-index-only"}} {
		r := clitest.Run(append(append([]string{"kafka-dump-log", "--index-sanity-check"}, extra...), "--files", idx+","+tidx)...)
		want := "Dumping " + idx + "\n" + idx + " passed sanity check.\nDumping " + tidx + "\n" + tidx + " passed sanity check.\n"
		if r.Code != 0 || r.Stdout != want || r.Stderr != "" {
			t.Errorf("%v: exit %d\n%s%s", extra, r.Code, r.Stdout, r.Stderr)
		}
	}
	b, _ := os.ReadFile(idx)
	if err := os.WriteFile(idx, b[:len(b)-3], 0o644); err != nil { // not a multiple of 8
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(idx)
	kafkaBoth(t, []string{"--index-sanity-check"}, []string{idx, tidx}, "Dumping "+idx+"\n",
		"Index file "+abs+" is corrupt, found 13 bytes which is neither positive nor a multiple of 8\n")
}

// TestKafkaMaxBytes: --max-bytes as FileRecords.slice(0, maxBytes) reads
// it, and as jopt converts it.
func TestKafkaMaxBytes(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "orders-0")
	log := filepath.Join(dir, "00000000000000000000.log")
	st, _ := os.Stat(log)
	full := clitest.Run("kafka-dump-log", "--files", log).Stdout
	head := "Dumping " + log + "\nLog starting offset: 0\n"
	firstTwo := linesOf(t, []string{"kafka-dump-log", "--files", log}, "baseOffset: 1 ")
	for _, c := range []struct {
		arg, out, err string
		code          int
	}{
		{"0", head, "", 0},          // an empty slice: no batch
		{"1", head, "", 0},          // 1 byte: no header, and no "Found N invalid bytes"
		{"400", firstTwo, "", 0},    // the third batch (at 312) is cut: not printed
		{"2147483647", full, "", 0}, // Kafka's default: the whole file
		{"2147483648", "Dumping " + log + "\n", "Cannot parse argument '2147483648' of option max-bytes\n", 1},
		{"-1", head, "Invalid size: -1 in read from FileRecords(size=" + itoa64(st.Size()) + ", file=" + log + ", start=0, end=2147483647)\n", 1},
	} {
		r := clitest.Run("kafka-dump-log", "--max-bytes", c.arg, "--files", log)
		if r.Code != c.code || r.Stdout != c.out || r.Stderr != c.err {
			t.Errorf("--max-bytes %s: exit %d\nstdout %s\nstderr %q", c.arg, r.Code, clitest.FirstDiff(c.out, r.Stdout), r.Stderr)
		}
	}
	if r := clitest.Run("kafka-dump-log", "--max-bytes", "1", "--max-bytes", "2", "--files", log); r.Code != 1 ||
		r.Stderr != "Found multiple arguments for option max-bytes, but you asked for only one\n" {
		t.Errorf("repeated: exit %d %q", r.Code, r.Stderr)
	}
	// kseg dump: the same reading of 0 and the default; out of range or
	// negative is a usage error there.
	if r := clitest.Run("dump", "-o", "kafka", "--max-bytes", "0", log); r.Code != 0 || r.Stdout != head {
		t.Errorf("dump --max-bytes 0: exit %d\n%s", r.Code, r.Stdout)
	}
	if r := clitest.Run("dump", "-o", "kafka", "--max-bytes", "2147483647", log); r.Stdout != full {
		t.Errorf("dump --max-bytes 2147483647:\n%s", clitest.FirstDiff(full, r.Stdout))
	}
	for _, v := range []string{"2147483648", "-1"} {
		if r := clitest.Run("dump", "--max-bytes", v, log); r.Code != ui.ExitUsage {
			t.Errorf("dump --max-bytes %s: exit %d", v, r.Code)
		}
	}
	// The text output agrees: nothing read, so nothing scanned.
	if r := clitest.Run("dump", "--max-bytes", "0", log); r.Code != 0 || strings.Contains(r.Stdout, "baseOffset") {
		t.Errorf("text --max-bytes 0: exit %d\n%s", r.Code, r.Stdout)
	}
}

func itoa64(v int64) string { return itoa(int(v)) }

func itoa(v int) string {
	if v < 0 {
		return "-" + itoa(-v)
	}
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}
