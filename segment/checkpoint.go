package segment

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kseg/kseg/decode"
)

// CheckpointVersion is the version line of every text checkpoint kseg
// reads (OffsetCheckpointFile.CURRENT_VERSION,
// LeaderEpochCheckpointFile.CURRENT_VERSION, PartitionMetadataFile).
const CheckpointVersion = 0

// OffsetCheckpointEntry is one line of recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, replication-offset-checkpoint or
// cleaner-offset-checkpoint: "<topic> <partition> <offset>".
type OffsetCheckpointEntry struct {
	Topic     string
	Partition int32
	Offset    int64
}

// EpochEntry is one line of leader-epoch-checkpoint: the first offset
// written in a leader epoch ("<epoch> <startOffset>").
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// textLine is one line as BufferedReader.readLine returns it, with the
// byte position where it starts. long marks a line longer than the
// splitter's bound, of which text holds only the start.
type textLine struct {
	pos  int64
	text string
	long bool
}

// javaLines splits b into lines the way BufferedReader.readLine does: a
// line ends at "\n", "\r" or "\r\n"; a last line without a terminator is
// still a line; nothing follows a final terminator. A line of more than
// maxLine bytes (0: no bound) is kept as its first bytes, marked long:
// no broker writes one, and a file of one 64 MiB line is not to be
// copied into a string.
func javaLines(b []byte, maxLine int) []textLine {
	var lines []textLine
	line := func(start, end int) {
		l := textLine{pos: int64(start)}
		if maxLine > 0 && end-start > maxLine {
			end, l.long = start+QuoteBytes+1, true
		}
		l.text = string(b[start:end])
		lines = append(lines, l)
	}
	start := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			line(start, i)
			start = i + 1
		case '\r':
			line(start, i)
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(b) {
		line(start, len(b))
	}
	return lines
}

// isJavaSpace is the regex class \s in java.util.regex: [ \t\n\x0B\f\r].
func isJavaSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// javaSplit mirrors Pattern.split(s) (limit 0) for a pattern described by
// match, which returns the length of a match starting at i (0 for none):
// a leading empty part survives when the input starts with a separator,
// trailing empty parts are removed, and an input with no match at all is
// returned whole.
func javaSplit(s string, match func(s string, i int) int) []string {
	var parts []string
	start, matched := 0, false
	for i := 0; i < len(s); {
		if n := match(s, i); n > 0 {
			parts = append(parts, s[start:i])
			i += n
			start, matched = i, true
			continue
		}
		i++
	}
	if !matched {
		return []string{s}
	}
	parts = append(parts, s[start:])
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// whitespaces is the pattern "\s+" the checkpoint formatters split with.
func whitespaces(s string, i int) int {
	j := i
	for j < len(s) && isJavaSpace(s[j]) {
		j++
	}
	return j - i
}

// colonWhitespaces is the pattern ":\s+" of PartitionMetadataReadBuffer.
func colonWhitespaces(s string, i int) int {
	if s[i] != ':' {
		return 0
	}
	n := whitespaces(s, i+1)
	if n == 0 {
		return 0
	}
	return 1 + n
}

// parseJavaInt is Integer.parseInt / Long.parseLong for ASCII input:
// optional sign, decimal digits, in range.
func parseJavaInt(s string, bits int) (int64, bool) {
	if s == "" || s == "+" || s == "-" {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, bits)
	return v, err == nil
}

// readCheckpoint is CheckpointFile.CheckpointReadBuffer#read: an empty
// file, or a file with only a version line, has no entries; the version
// must be CheckpointVersion; every remaining line must parse; the count
// must match. Lines are not preallocated by the count (a corrupt count
// must not drive allocation).
func readCheckpoint[T any](b []byte, path string, parse func(parts []string) (T, bool)) ([]T, error) {
	loc := absPath(path)
	malformed := func(l textLine, field string, n int) error {
		return fileCorrupt(path, l.pos, field, decode.ErrCorrupt,
			fmt.Sprintf("Malformed line in checkpoint file [%s]: %s", loc, quote(l.text)),
			"line %d: malformed %s %q", n, field, quote(l.text))
	}
	lines := javaLines(b, MaxCheckpointLine)
	if len(lines) == 0 {
		return nil, nil
	}
	v, ok := parseJavaInt(lines[0].text, 32)
	if !ok || lines[0].long {
		return nil, malformed(lines[0], "version", 1)
	}
	if v != CheckpointVersion {
		return nil, fileCorrupt(path, lines[0].pos, "version", decode.ErrUnsupported,
			fmt.Sprintf("Unrecognised version:%d, expected version: %d in checkpoint file at: %s", v, CheckpointVersion, loc),
			"line 1: version %d, expected %d", v, CheckpointVersion)
	}
	if len(lines) == 1 {
		return nil, nil
	}
	count, ok := parseJavaInt(lines[1].text, 32)
	if !ok || lines[1].long {
		return nil, malformed(lines[1], "count", 2)
	}
	var entries []T
	for i, l := range lines[2:] {
		e, ok := parse(javaSplit(l.text, whitespaces))
		if !ok || l.long {
			return nil, malformed(l, "entry", i+3)
		}
		entries = append(entries, e)
	}
	if int64(len(entries)) != count {
		return nil, fileCorrupt(path, lines[1].pos, "count", decode.ErrCorrupt,
			fmt.Sprintf("Expected [%d] entries in checkpoint file [%s], but found only [%d]", count, loc, len(entries)),
			"line 2: count %d, but the file has %d entries", count, len(entries))
	}
	return entries, nil
}

// parseOffsetEntry is OffsetCheckpointFile.Formatter#fromString.
func parseOffsetEntry(p []string) (OffsetCheckpointEntry, bool) {
	if len(p) != 3 {
		return OffsetCheckpointEntry{}, false
	}
	part, off, ok := parseIntLong(p[1], p[2])
	return OffsetCheckpointEntry{Topic: p[0], Partition: part, Offset: off}, ok
}

// parseEpochEntry is LeaderEpochCheckpointFile.Formatter#fromString.
func parseEpochEntry(p []string) (EpochEntry, bool) {
	if len(p) != 2 {
		return EpochEntry{}, false
	}
	epoch, off, ok := parseIntLong(p[0], p[1])
	return EpochEntry{Epoch: epoch, StartOffset: off}, ok
}

// parseIntLong parses the two numbers both entry formats end with: an int
// (a partition, an epoch; Integer.parseInt) and a long (an offset;
// Long.parseLong). The caller drops the entry unless ok.
func parseIntLong(i, l string) (int32, int64, bool) {
	v, ok1 := parseJavaInt(i, 32)
	w, ok2 := parseJavaInt(l, 64)
	return int32(v), w, ok1 && ok2
}

// ParseOffsetCheckpoint decodes an offset checkpoint held in memory.
func ParseOffsetCheckpoint(b []byte) ([]OffsetCheckpointEntry, error) {
	return readCheckpoint(b, "", parseOffsetEntry)
}

// ReadOffsetCheckpoint reads one of the log directory's offset checkpoints
// (OffsetCheckpointFile). Entries are in file order, which is the broker's
// map order: unspecified.
func ReadOffsetCheckpoint(path string) ([]OffsetCheckpointEntry, error) {
	return readCheckpointFile(path, MaxOffsetCheckpointBytes, "log directory offset checkpoint", parseOffsetEntry)
}

// readCheckpointFile reads a checkpoint file of at most limit bytes (what
// names it in the error when it is larger) and decodes it with parse.
func readCheckpointFile[T any](path string, limit int64, what string, parse func(parts []string) (T, bool)) ([]T, error) {
	b, err := ReadFileLimit(path, limit, what)
	if err != nil {
		return nil, err
	}
	return readCheckpoint(b, path, parse)
}

// CheckpointOffset is partition pd's entry in name, one of the offset
// checkpoints of its log directory (LogManager reads them at start-up):
// log-start-offset-checkpoint, the log start offset LogManager hands each
// UnifiedLog; recovery-point-offset-checkpoint, the offset LogLoader's
// recovery starts from; replication-offset-checkpoint, the high watermark
// Partition.createLog restores. It is -1 when the file or the entry is
// absent, or when pd's name is not <topic>-<partition>. A file that does
// not parse (a *decode.CorruptError) or cannot be read is an error, with
// -1: each caller says what it does without the entry. A partition
// directory opened through a LogDirCache reads each file once per run.
func CheckpointOffset(pd *PartitionDir, name string) (int64, error) {
	if pd.Topic == "" || pd.Partition < 0 {
		return -1, nil
	}
	if pd.logDir != nil {
		return pd.logDir.offset(name, pd.Topic, pd.Partition)
	}
	entries, err := ReadOffsetCheckpoint(filepath.Join(LogDirOf(pd.Path), name))
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	for _, e := range entries {
		if e.Topic == pd.Topic && e.Partition == pd.Partition {
			return e.Offset, nil
		}
	}
	return -1, nil
}

// ParseLeaderEpochCheckpoint decodes a leader-epoch-checkpoint held in
// memory.
func ParseLeaderEpochCheckpoint(b []byte) ([]EpochEntry, error) {
	return readCheckpoint(b, "", parseEpochEntry)
}

// ReadLeaderEpochCheckpoint reads a partition's leader-epoch-checkpoint
// (LeaderEpochCheckpointFile).
func ReadLeaderEpochCheckpoint(path string) ([]EpochEntry, error) {
	return readCheckpointFile(path, MaxEpochCheckpointBytes, "leader-epoch-checkpoint", parseEpochEntry)
}

// checkpointHeader is CheckpointWriteBuffer#write's first two lines.
func checkpointHeader(n int) []byte {
	b := strconv.AppendInt(nil, CheckpointVersion, 10)
	b = append(b, '\n')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\n')
}

// EncodeOffsetCheckpoint renders entries in CheckpointFile's format, in
// the given order: "0\n<N>\n<topic> <partition> <offset>\n"….
func EncodeOffsetCheckpoint(entries []OffsetCheckpointEntry) []byte {
	b := checkpointHeader(len(entries))
	for _, e := range entries {
		b = append(b, e.Topic...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e.Partition), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.Offset, 10)
		b = append(b, '\n')
	}
	return b
}

// EncodeLeaderEpochCheckpoint renders entries in CheckpointFile's format:
// "0\n<N>\n<epoch> <startOffset>\n"….
func EncodeLeaderEpochCheckpoint(entries []EpochEntry) []byte {
	b := checkpointHeader(len(entries))
	for _, e := range entries {
		b = strconv.AppendInt(b, int64(e.Epoch), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.StartOffset, 10)
		b = append(b, '\n')
	}
	return b
}

// PartitionMetadata is the content of partition.metadata
// (PartitionMetadataFile, PartitionMetadata).
type PartitionMetadata struct {
	Version int
	TopicID [16]byte
	// TopicIDString is Uuid#toString: URL-safe base64 of the 16 bytes
	// without padding (22 characters).
	TopicIDString string
}

// TopicIDString renders a topic id as Kafka's Uuid#toString does.
func TopicIDString(id [16]byte) string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// ParseTopicID is Uuid.fromString: URL-safe base64 (padding optional) of
// exactly 16 bytes, at most 24 characters.
func ParseTopicID(s string) ([16]byte, error) {
	var id [16]byte
	if len(s) > 24 {
		return id, fmt.Errorf("topic id %q is too long to be a base64 UUID", quote(s))
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return id, fmt.Errorf("topic id %q: %w", quote(s), err)
	}
	if len(b) != len(id) {
		return id, fmt.Errorf("topic id %q decodes to %d bytes, not 16", quote(s), len(b))
	}
	copy(id[:], b)
	return id, nil
}

// ParsePartitionMetadata decodes partition.metadata held in memory.
func ParsePartitionMetadata(b []byte) (PartitionMetadata, error) {
	return parsePartitionMetadata(b, "")
}

// ReadPartitionMetadata reads partition.metadata
// (PartitionMetadataReadBuffer#read): two lines, each split on ":\s+"
// into exactly two parts (the keys themselves are not checked, as in
// Kafka); version 0; a non-zero topic id. Lines after the second are
// ignored, and not read: only the first MaxPartitionMetadataBytes are.
func ReadPartitionMetadata(path string) (PartitionMetadata, error) {
	f, err := OpenFile(path)
	if err != nil {
		return PartitionMetadata{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPartitionMetadataBytes))
	if err != nil {
		return PartitionMetadata{}, err
	}
	return parsePartitionMetadata(b, path)
}

func parsePartitionMetadata(b []byte, path string) (PartitionMetadata, error) {
	var pm PartitionMetadata
	loc := absPath(path)
	malformed := func(l textLine, field, format string, args ...any) error {
		return fileCorrupt(path, l.pos, field, decode.ErrCorrupt,
			fmt.Sprintf("Malformed line in checkpoint file %s: %s", loc, quote(l.text)), format, args...)
	}
	// A line longer than the bound — or than the bytes read — is no line
	// a broker writes.
	lines := javaLines(b, MaxCheckpointLine)
	for i := range min(len(lines), 2) {
		if l := &lines[i]; !l.long && len(b) == MaxPartitionMetadataBytes && int(l.pos)+len(l.text) == len(b) {
			l.long = true
		}
	}
	if len(lines) == 0 {
		return pm, fileCorrupt(path, 0, "version", decode.ErrTruncated, "", "empty file")
	}
	parts := javaSplit(lines[0].text, colonWhitespaces)
	if len(parts) != 2 || lines[0].long {
		return pm, malformed(lines[0], "version", "line 1: want \"version: <n>\", got %q", quote(lines[0].text))
	}
	v, ok := parseJavaInt(parts[1], 32)
	if !ok {
		return pm, malformed(lines[0], "version", "line 1: version %q is not a number", quote(parts[1]))
	}
	if v != CheckpointVersion {
		return pm, fileCorrupt(path, lines[0].pos, "version", decode.ErrUnsupported,
			fmt.Sprintf("Unrecognized version of partition metadata file + (%s): %d", loc, v),
			"line 1: version %d, expected %d", v, CheckpointVersion)
	}
	pm.Version = int(v)
	if len(lines) < 2 {
		return pm, fileCorrupt(path, int64(len(b)), "topic_id", decode.ErrTruncated, "", "no topic_id line")
	}
	parts = javaSplit(lines[1].text, colonWhitespaces)
	if len(parts) != 2 || lines[1].long {
		return pm, malformed(lines[1], "topic_id", "line 2: want \"topic_id: <id>\", got %q", quote(lines[1].text))
	}
	id, err := ParseTopicID(parts[1])
	if err != nil {
		return pm, malformed(lines[1], "topic_id", "line 2: %v", err)
	}
	if id == ([16]byte{}) {
		return pm, fileCorrupt(path, lines[1].pos, "topic_id", decode.ErrCorrupt,
			fmt.Sprintf("Invalid topic ID in partition metadata file (%s)", loc),
			"line 2: the zero topic id is reserved")
	}
	pm.TopicID, pm.TopicIDString = id, TopicIDString(id)
	return pm, nil
}

// EncodePartitionMetadata renders partition.metadata exactly as
// PartitionMetadata#encode: "version: <v>\ntopic_id: <id>" with no final
// newline.
func EncodePartitionMetadata(pm PartitionMetadata) []byte {
	return fmt.Appendf(nil, "version: %d\ntopic_id: %s", pm.Version, TopicIDString(pm.TopicID))
}

// CleanShutdown is the content of the log directory's .kafka_cleanshutdown
// marker (CleanShutdownFileHandler). Its presence means the broker shut
// down cleanly; brokers before 3.7 leave it empty.
type CleanShutdown struct {
	Empty       bool  // zero-length file (older brokers)
	Version     int   // -1 when absent
	BrokerEpoch int64 // -1 when absent, as CleanShutdownFileHandler#read returns
}

// ReadCleanShutdown reads .kafka_cleanshutdown: empty, or JSON
// {"version":0,"brokerEpoch":N}. Kafka logs and ignores a malformed file;
// kseg reports it as corrupt so the operator sees it.
func ReadCleanShutdown(path string) (CleanShutdown, error) {
	b, err := ReadFileLimit(path, MaxTextFileBytes, ".kafka_cleanshutdown")
	if err != nil {
		return CleanShutdown{}, err
	}
	return parseCleanShutdown(b, path)
}

func parseCleanShutdown(b []byte, path string) (CleanShutdown, error) {
	cs := CleanShutdown{Version: -1, BrokerEpoch: -1}
	if len(b) == 0 {
		cs.Empty = true
		return cs, nil
	}
	var content struct {
		Version     *int   `json:"version"`
		BrokerEpoch *int64 `json:"brokerEpoch"`
	}
	if err := json.Unmarshal(b, &content); err != nil {
		var pos int64
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			pos = se.Offset
		case errors.As(err, &te):
			pos = te.Offset
		}
		return cs, fileCorrupt(path, pos, "brokerEpoch", decode.ErrCorrupt, "", "%v", err)
	}
	if content.Version != nil {
		cs.Version = *content.Version
	}
	if content.BrokerEpoch != nil {
		cs.BrokerEpoch = *content.BrokerEpoch
	}
	return cs, nil
}
