package dump

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// The kafka output checked against kafka-dump-log's documented format
// (formats.md §9.3, the format strings of DumpLogSegments' printBatchLevel
// and printRecordMetadata) and its worked example (§9.5: the bytes of two
// batches and the lines Kafka prints for them), field by field, rather
// than against kseg's own goldens.

// spec95Hex is the §9.5 example file: a transactional batch of two
// records (k0/v0; a null key, v1 and a header h) and its COMMIT marker.
const spec95Hex = "0000000000000000000000490000000302e6ef6d830010000000010000018bcfe568000000018bcfe5680100000000000003e80000000000000000000214000000046b300476300018000202010476310202680278" +
	"0000000000000002000000420000000302c3c617a40030000000000000018bcfe568050000018bcfe5680500000000000003e80000ffffffff000000012000000008000000010c00000000000700"

// spec95Output is what §9.5 says kafka-dump-log.sh --print-data-log
// --files 00000000000000000000.log prints.
var spec95Output = []string{
	"Dumping 00000000000000000000.log",
	"Log starting offset: 0",
	"baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: 1000 producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000001 size: 85 magic: 2 compresscodec: none crc: 3874450819 isvalid: true",
	"| offset: 0 CreateTime: 1700000000000 keySize: 2 valueSize: 2 sequence: 0 headerKeys: [] key: k0 payload: v0",
	"| offset: 1 CreateTime: 1700000000001 keySize: -1 valueSize: 2 sequence: 1 headerKeys: [h] payload: v1",
	"baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: 1000 producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 85 CreateTime: 1700000000005 size: 78 magic: 2 compresscodec: none crc: 3284539300 isvalid: true",
	"| offset: 2 CreateTime: 1700000000005 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 7",
}

// The labels of printBatchLevel and printRecordMetadata, in order (§9.3).
// "TS" stands for the timestamp type's name (CreateTime, LogAppendTime,
// NoTimestampType), which Kafka prints as a label.
var (
	v2BatchLabels = []string{"baseOffset", "lastOffset", "count", "baseSequence", "lastSequence", "producerId",
		"producerEpoch", "partitionLeaderEpoch", "isTransactional", "isControl", "deleteHorizonMs", "position",
		"TS", "size", "magic", "compresscodec", "crc", "isvalid"}
	legacyBatchLabels = []string{"offset", "position", "TS", "size", "magic", "compresscodec", "crc", "isvalid"}
	v2RecordLabels    = []string{"offset", "TS", "keySize", "valueSize", "sequence", "headerKeys"}
	legacyRecordLabel = []string{"offset", "TS", "keySize", "valueSize", "isValid", "crc"}
)

// kafkaFields splits a kafka-dump-log line into its "label: value" pairs
// in order. Values never contain ": " in these lines, except the JSON of
// a decoded payload, which only the key:/payload: parts carry.
func kafkaFields(t *testing.T, line string) (labels, values []string) {
	t.Helper()
	line = strings.TrimPrefix(line, "| ")
	re := regexp.MustCompile(`(\S+): `)
	locs := re.FindAllStringSubmatchIndex(line, -1)
	for i, l := range locs {
		label := line[l[2]:l[3]]
		end := len(line)
		if i+1 < len(locs) {
			end = locs[i+1][0] - 1
		}
		switch label {
		case "CreateTime", "LogAppendTime", "NoTimestampType":
			label = "TS"
		}
		labels = append(labels, label)
		values = append(values, line[l[1]:end])
	}
	return labels, values
}

// checkKafkaLine checks that line has exactly the labels want (and then
// maybe more), and that each value has the shape of its Java type.
func checkKafkaLine(t *testing.T, line string, want []string) {
	t.Helper()
	labels, values := kafkaFields(t, line)
	if len(labels) < len(want) {
		t.Errorf("%q: %d fields, want at least %v", line, len(labels), want)
		return
	}
	num := regexp.MustCompile(`^-?[0-9]+$`)
	for i, w := range want {
		if labels[i] != w {
			t.Errorf("%q: field %d is %q, want %q", line, i, labels[i], w)
			continue
		}
		v := values[i]
		ok := true
		switch w {
		case "isTransactional", "isControl", "isvalid", "isValid":
			ok = v == "true" || v == "false"
		case "deleteHorizonMs":
			ok = v == "OptionalLong.empty" || regexp.MustCompile(`^OptionalLong\[-?[0-9]+\]$`).MatchString(v)
		case "compresscodec":
			ok = v == "none" || v == "gzip" || v == "snappy" || v == "lz4" || v == "zstd"
		case "headerKeys":
			// A control record's " KRaftVersion {…}" (no colon) follows.
			keys, _, _ := strings.Cut(v, "] ")
			ok = strings.HasPrefix(keys, "[") && !strings.Contains(keys, ", ")
		case "crc":
			ok = num.MatchString(v) && !strings.HasPrefix(v, "-") // unsigned
		default:
			ok = num.MatchString(v)
		}
		if !ok {
			t.Errorf("%q: %s has the value %q", line, w, v)
		}
	}
}

// writeSpec95 writes the §9.5 file into a temporary working directory.
func writeSpec95(t *testing.T) string {
	t.Helper()
	raw, err := hex.DecodeString(spec95Hex)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	name := "00000000000000000000.log"
	testkit.WriteFile(t, name, raw)
	return name
}

// TestKafkaSpecExample: the §9.5 example, line for line and field by
// field, with both command lines.
func TestKafkaSpecExample(t *testing.T) {
	name := writeSpec95(t)
	for _, args := range [][]string{
		{"kafka-dump-log", "--print-data-log", "--files", name},
		{"dump", "-o", "kafka", "--print-data-log", name},
	} {
		r := clitest.Run(args...)
		got := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
		if r.Code != 0 || r.Stderr != "" {
			t.Errorf("kseg %s: exit %d, stderr %q", strings.Join(args, " "), r.Code, r.Stderr)
		}
		if len(got) != len(spec95Output) {
			t.Fatalf("kseg %s: %d lines, want %d:\n%s", strings.Join(args, " "), len(got), len(spec95Output), r.Stdout)
		}
		for i, want := range spec95Output {
			if got[i] == want {
				continue
			}
			gl, gv := kafkaFields(t, got[i])
			wl, wv := kafkaFields(t, want)
			for j := 0; j < len(wl) || j < len(gl); j++ {
				var g, w string
				if j < len(gl) {
					g = gl[j] + ": " + gv[j]
				}
				if j < len(wl) {
					w = wl[j] + ": " + wv[j]
				}
				if g != w {
					t.Errorf("line %d field %d: got %q, want %q", i+1, j+1, g, w)
				}
			}
		}
	}
	// The documented layouts: every batch and record line of the example
	// has the labels of printBatchLevel / printRecordMetadata in order.
	for _, l := range spec95Output[2:] {
		if strings.HasPrefix(l, "| ") {
			checkKafkaLine(t, l, v2RecordLabels)
		} else {
			checkKafkaLine(t, l, v2BatchLabels)
		}
	}
}

// TestKafkaLineLayouts: every batch and record line kseg prints for the
// fixtures (v0, v1 and v2 batches, every codec, control batches, LogAppendTime
// and compacted batches) has §9.3's labels in order with values of the
// right Java type.
func TestKafkaLineLayouts(t *testing.T) {
	lines := 0
	for _, name := range []string{"orders-0", "txn-0", "control-0", "compacted-0", "legacy-v0-0", "legacy-v1-0"} {
		dir := filepath.Join(filepath.Dir(clitest.GoldenRoot), "partitions", name)
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, log := range logs {
			r := clitest.Run("kafka-dump-log", "--deep-iteration", "--files", log)
			if r.Code != 0 {
				t.Fatalf("%s: exit %d: %s", log, r.Code, r.Stderr)
			}
			legacy := strings.Contains(name, "legacy")
			for _, l := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
				switch {
				case strings.HasPrefix(l, "Dumping "), strings.HasPrefix(l, "Log starting offset: "):
					continue
				case strings.HasPrefix(l, "| ") && legacy:
					checkKafkaLine(t, l, legacyRecordLabel)
				case strings.HasPrefix(l, "| "):
					checkKafkaLine(t, l, v2RecordLabels)
				case legacy:
					checkKafkaLine(t, l, legacyBatchLabels)
				default:
					checkKafkaLine(t, l, v2BatchLabels)
				}
				lines++
			}
		}
	}
	if lines < 50 {
		t.Errorf("checked only %d lines", lines)
	}
}

// TestKafkaHeaderKeysJavaUTF8: header keys are Strings (DefaultRecord
// reads them with Utils.utf8), so malformed UTF-8 becomes one U+FFFD per
// bad byte, as in keys and values.
func TestKafkaHeaderKeysJavaUTF8(t *testing.T) {
	raw, err := decode.AppendBatch(nil, decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: 1700000000000, Value: []byte("v"),
			Headers: []decode.Header{{Key: []byte{0x68, 0xff, 0xfe, 0x58}, Value: []byte("x")}, {Key: []byte("ok")}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	testkit.WriteFile(t, "00000000000000000000.log", raw)
	r := clitest.Run("kafka-dump-log", "--deep-iteration", "--files", "00000000000000000000.log")
	if want := " headerKeys: [h\uFFFD\uFFFDX,ok]\n"; !strings.Contains(r.Stdout, want) {
		t.Errorf("no %q in\n%s", want, r.Stdout)
	}
}

// TestKafkaClearElrRecord: a CLEAR_ELR_RECORD (apiKey 28, KIP-966), which
// the table of 2024 did not hold ("Unknown metadata id 28"), printed as
// ClusterMetadataLogMessageParser prints it, through a whole
// __cluster_metadata segment; text and json name it too.
func TestKafkaClearElrRecord(t *testing.T) {
	// AbstractApiMessageSerde: frame version 1, apiKey 28, version 0, then
	// the flexible message: topicName "orders" (compact string), no tags.
	value := append([]byte{1, 28, 0, 7}, append([]byte("orders"), 0)...)
	raw, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: 42, PartitionLeaderEpoch: 1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: 1700000000000, Value: value}})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	dir := "__cluster_metadata-0"
	clitest.Mkdir(t, dir)
	log := filepath.Join(dir, "00000000000000000042.log")
	testkit.WriteFile(t, log, raw)
	want := `| offset: 42 CreateTime: 1700000000000 keySize: -1 valueSize: 11 sequence: -1 headerKeys: [] payload: {"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"orders"}}`
	for _, args := range [][]string{
		{"kafka-dump-log", "--cluster-metadata-decoder", "--files", log},
		{"dump", "-o", "kafka", "--cluster-metadata-decoder", log},
	} {
		r := clitest.Run(args...)
		if lines := strings.Split(r.Stdout, "\n"); r.Code != 0 || len(lines) < 4 || lines[3] != want {
			t.Errorf("kseg %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	r := clitest.Run("dump", "-o", "json", "--deep", log)
	if r.Code != 0 || !strings.Contains(r.Stdout, `"type":"CLEAR_ELR_RECORD","apiKey":28,"unknown":false`) ||
		!strings.Contains(r.Stdout, `"value":{"topicName":"orders"}`) {
		t.Errorf("json: exit %d\n%s", r.Code, r.Stdout)
	}
}

func TestJavaSplitComma(t *testing.T) {
	for in, want := range map[string]string{"a,b": "a|b", "a,b,,": "a|b", ",a": "|a", "": "", ",": "", ",,": "", "a,,b": "a||b", "a": "a"} {
		got := javaSplitComma(in)
		if strings.Join(got, "|") != want || (in == "" && len(got) != 1) || (in == "," && len(got) != 0) {
			t.Errorf("split(%q) = %q", in, got)
		}
	}
}

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
	testkit.WriteFile(t, log, b[:646+17])
	r := clitest.Run("kafka-dump-log", "--files", log+","+idx)
	if r.Code != 0 || !strings.Contains(r.Stdout, "Found 17 invalid bytes at the end of 00000000000000000000.log\nDumping "+idx+"\n") {
		t.Errorf("17-byte tail: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A size below 14 that is not zero: the same exception, with it.
	binary.BigEndian.PutUint32(b[646+8:], 13)
	testkit.WriteFile(t, log, b[:646+40])
	kafkaBoth(t, nil, []string{log}, want, "Found record size 13 smaller than minimum record overhead (14) in file "+log+".\n")
}

// TestKafkaReadsFutureMagicAsV2: FileLogInputStream reads a batch whose
// magic is above 2 as a DefaultRecordBatch, and the dump goes on past it.
func TestKafkaReadsFutureMagicAsV2(t *testing.T) {
	dir := clitest.ChdirFixture(t, "partitions", "txn-0")
	log := filepath.Join(dir, "00000000000000000000.log")
	b, _ := os.ReadFile(log)
	b[16] = 3 // the first batch; the magic is not covered by the crc
	testkit.WriteFile(t, log, b)
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
		testkit.WriteFile(t, "00000000000000000000.log", raw)
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
		{"-1", head, "Invalid size: -1 in read from FileRecords(size=" + strconv.FormatInt(st.Size(), 10) + ", file=" + log + ", start=0, end=2147483647)\n", 1},
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
