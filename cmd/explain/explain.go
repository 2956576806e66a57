// Package explain is kseg explain: the batch holding one offset, printed
// as an annotated hex layout, field by field.
package explain

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

type explainOptions struct {
	output string
	offset int64
}

func (o *explainOptions) AddFlags(c *cobra.Command) {
	ui.AddOutputFlag(c, &o.output)
}

func (o *explainOptions) Validate(_ *cobra.Command, args []string) error {
	if err := ui.ValidateOutput(o.output); err != nil {
		return err
	}
	off, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || off < 0 {
		return ui.UsageErrorf("OFFSET %q is not an offset", args[0])
	}
	o.offset = off
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &explainOptions{}
	c := &cobra.Command{
		Use:   "explain OFFSET PATH",
		Short: "Show the batch holding OFFSET as an annotated hex layout, field by field",
		Long: `Find the batch that holds OFFSET in PATH (a partition directory or a .log file)
and print every byte of it with the Kafka field it belongs to: the header
(baseOffset, batchLength, crc, attributes …) and each record's varints, key,
value and headers. Compressed records are shown at their decompressed
positions. For the moments when an operator must see the bytes.
` + ui.ExitStatusHelp,
		Example: `  kseg explain 5 testdata/partitions/txn-0
  kseg explain 1200 /var/lib/kafka/data/orders-0/00000000000000001200.log -o json
  kseg explain -o table 12 testdata/partitions/orders-0`,
		Args: cobra.ExactArgs(2),
	}
	return ui.NewCommand(c, s, o, runExplain)
}

// findSegmentLog picks the .log whose base offset is the largest not above
// offset, as LogSegments.floorSegment does.
func findSegmentLog(path string, offset int64) (string, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	if !st.IsDir() {
		fi, _ := segment.ParseFileName(filepath.Base(path))
		return path, fi.Offset, nil
	}
	pd, err := segment.OpenPartitionDir(path)
	if err != nil {
		return "", 0, err
	}
	var best *segment.SegmentFiles
	for i := range pd.Segments {
		sg := &pd.Segments[i]
		if sg.Log != "" && sg.BaseOffset <= offset {
			best = sg
		}
	}
	if best == nil {
		// Below the first segment: retention (or a cut) deleted it. The
		// log does not hold what was asked: a usage error, as every
		// question the input cannot answer (README "Exit status").
		first := int64(-1)
		for _, sg := range pd.Segments {
			if sg.Log != "" {
				first = sg.BaseOffset
				break
			}
		}
		return "", 0, ui.Unansweredf("%s: offset %d is below the log start (the first segment begins at %d): the log does not hold it", path, offset, first)
	}
	start := int64(0)
	if best.Index != "" {
		if idx, err := segment.ReadOffsetIndex(best.Index, best.BaseOffset); err == nil && segment.SanityCheckOffsetIndex(&idx) == nil {
			start = int64(idx.Lookup(offset).Position)
		}
	}
	return best.Log, start, nil
}

// runExplain explains args[0], an offset, in args[1], a partition
// directory or a .log.
func runExplain(_ context.Context, s *ui.Streams, o *explainOptions, args []string) error {
	path := args[1]
	if err := inputs.Check(s, "explain", path, inputs.LogOrPartition); err != nil {
		return err
	}
	logPath, start, err := findSegmentLog(path, o.offset)
	if err != nil {
		return err
	}
	lf, err := segment.OpenLog(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	// Only an index that passed the sanity check narrows the scan; a bad
	// index entry could point mid-batch, so fall back to the start then.
	sc := lf.Scanner(segment.ScanOptions{Start: start})
	found := false
	for sc.Next() {
		b := sc.Batch()
		if b.LastOffset() >= o.offset {
			if b.IsLegacy() || b.BaseOffset <= o.offset {
				found = true
			}
			break
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !found {
		if start > 0 {
			return runExplainFrom(s, o, path, lf, 0)
		}
		return notHeld(path, logPath, o.offset, sc)
	}
	return renderExplain(s, o, lf.Path, sc.Pos(), sc.Batch())
}

func runExplainFrom(s *ui.Streams, o *explainOptions, path string, lf *segment.LogFile, start int64) error {
	sc := lf.Scanner(segment.ScanOptions{Start: start})
	for sc.Next() {
		b := sc.Batch()
		if b.LastOffset() >= o.offset && (b.IsLegacy() || b.BaseOffset <= o.offset) {
			return renderExplain(s, o, lf.Path, sc.Pos(), b)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return notHeld(path, lf.Path, o.offset, nil)
}

// notHeld is explain's answer for an offset no batch holds: past the end
// of the log (or of the .log file given), or in a gap the cleaner or a
// cut left. The log does not hold what was asked: a usage error (2), as
// every question the input cannot answer; damage the scan stopped at is a
// finding (3) instead. sc is the scan that ended, nil to scan logPath
// again for its end.
func notHeld(path, logPath string, offset int64, sc *segment.Scanner) error {
	if sc != nil && sc.Tail().Kind != segment.TailClean && sc.Tail().Kind != segment.TailZeroFilled {
		t := sc.Tail()
		return &ui.ExitCodeError{Code: ui.ExitFindings, Err: fmt.Errorf("%s: no batch holds offset %d before the damage at position %d (%s)", logPath, offset, t.ValidBytes, t.Kind)}
	}
	end := int64(-1)
	if lf, err := segment.OpenLog(logPath); err == nil {
		scan := lf.Scanner(segment.ScanOptions{})
		for scan.Next() {
			end = scan.Batch().NextOffset()
		}
		lf.Close()
	}
	what, last := "the log", true
	if path == logPath {
		what = filepath.Base(logPath)
	} else if pd, err := segment.OpenPartitionDir(path); err == nil {
		for _, sg := range pd.Segments {
			if sg.Log != "" && sg.Log != logPath && sg.BaseOffset > offset {
				last = false // a later segment: the offset is in a gap
			}
		}
	}
	if end >= 0 && offset >= end && last {
		return ui.Unansweredf("%s: offset %d is past the end of %s (%d): no batch holds it", path, offset, what, end)
	}
	return ui.Unansweredf("%s: no batch holds offset %d: %s has a gap there (the log cleaner's compaction, or a cut, removed it)", path, offset, what)
}

func renderExplain(s *ui.Streams, o *explainOptions, path string, pos int64, b *decode.Batch) error {
	var dec decode.Decoder
	fields, lerr := dec.Layout(b)
	w := bufio.NewWriter(s.Out)
	defer w.Flush()
	if o.output == "json" {
		explainJSON(w, path, pos, b, fields)
	} else if err := explainText(w, s, o, path, pos, b, fields); err != nil {
		return err
	}
	crcBad := !b.CRCValid()
	if lerr != nil || crcBad {
		w.Flush()
		if crcBad {
			// An invalid batch is a finding (3), as dump reports it.
			fmt.Fprintf(s.Err, "kseg: ERROR %s %s: batch at position %d (baseOffset %d): crc mismatch: stored %d (0x%08x), computed %d (0x%08x)\n",
				finding.CRCMismatch, filepath.Base(path), pos, b.BaseOffset, b.CRC, b.CRC, b.ComputeCRC(), b.ComputeCRC())
		}
		if lerr != nil {
			fmt.Fprintf(s.Err, "kseg: %v\n", lerr)
		}
		return ui.FindingsExit()
	}
	return nil
}

// explainJSON writes one "field" line per field of the batch at pos.
func explainJSON(w io.Writer, path string, pos int64, b *decode.Batch, fields []decode.Field) {
	var j ui.JSONWriter
	for _, f := range fields {
		j.B = j.B[:0]
		j.BeginLine("field")
		j.Str("file", path)
		if f.Decompressed {
			j.Null("position")
			j.Int("decompressedPosition", int64(f.Pos))
		} else {
			j.Int("position", pos+int64(f.Pos))
		}
		j.Int("length", int64(f.Len))
		j.Int("depth", int64(f.Depth))
		j.Str("field", f.Name)
		j.Str("value", f.Value)
		if !f.Decompressed && f.Pos+f.Len <= len(b.Raw) {
			j.Str("hex", hex.EncodeToString(b.Raw[f.Pos:f.Pos+f.Len]))
		}
		j.EndLine()
		w.Write(j.B)
	}
}

// explainText writes the batch at pos as text or a table: its head line,
// its fields with their positions and bytes, and a compressed legacy
// wrapper's inner messages.
func explainText(w io.Writer, s *ui.Streams, o *explainOptions, path string, pos int64, b *decode.Batch, fields []decode.Field) error {
	st := s.Styles()
	inner, ierr := legacyInner(b)
	if len(inner) > 0 {
		// A compressed legacy wrapper carries the offset of its last
		// inner message (LegacyRecord / AbstractLegacyRecordBatch):
		// "5..5" would hide that it holds 3..5.
		fmt.Fprintf(w, "%s position %d: wrapper message (%s) holding offsets %d..%d, %d bytes, magic %d\n",
			path, pos, b.Compression(), inner[0].Offset, inner[len(inner)-1].Offset, b.Size(), b.Magic)
	} else {
		fmt.Fprintf(w, "%s position %d: batch %d..%d, %d bytes, magic %d\n", path, pos, b.BaseOffset, b.LastOffset(), b.Size(), b.Magic)
	}
	rows := make([][]string, 0, len(fields))
	for _, f := range fields {
		where := strconv.FormatInt(pos+int64(f.Pos), 10)
		bytesHex := ""
		if f.Decompressed {
			where = "+" + strconv.Itoa(f.Pos)
			bytesHex = "(decompressed)"
		} else if f.Pos+f.Len <= len(b.Raw) {
			bytesHex = hexPreview(b.Raw[f.Pos : f.Pos+f.Len])
		}
		rows = append(rows, []string{where, bytesHex, strings.Repeat("  ", f.Depth) + f.Name, f.Value})
	}
	if o.output == "table" {
		if err := ui.RenderTable(w, s.Width, []string{"position", "bytes", "field", "value"}, rows); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%10s  %-35s  %-28s %s\n", "position", "bytes", "field", "value")
		for _, r := range rows {
			fmt.Fprintf(w, "%10s  %-35s  %s %s\n", r[0], r[1], ui.PadDisplay(st.Paint(st.Title, r[2]), 28), r[3])
		}
	}
	if len(inner) == 0 && ierr == nil {
		return nil
	}
	fmt.Fprintf(w, "%s\n", st.Paint(st.Title, fmt.Sprintf("inner messages (decompressed %s):", b.Compression())))
	for _, r := range inner {
		mark := ""
		if r.Offset == o.offset {
			mark = "  <- offset " + strconv.FormatInt(o.offset, 10)
		}
		fmt.Fprintf(w, "  offset %s magic %d keySize %d valueSize %d crc %d %s%s\n",
			st.Paint(st.Offset, strconv.FormatInt(r.Offset, 10)), r.Magic, r.KeySize(), r.ValueSize(), r.CRC, validWord(r.CRCValid), mark)
	}
	if ierr != nil {
		fmt.Fprintf(w, "  %s\n", st.Paint(st.Err, ierr.Error()))
	}
	return nil
}

// legacyInner decodes the inner messages of a compressed v0/v1 wrapper
// message (nil for anything else).
func legacyInner(b *decode.Batch) ([]decode.Record, error) {
	if !b.IsLegacy() || b.Compression() == decode.CompressionNone {
		return nil, nil
	}
	var dec decode.Decoder
	var out []decode.Record
	err := dec.Records(b, func(r *decode.Record) error {
		c := *r // Key and Value alias the decoder's buffer: copy them
		if r.Key != nil {
			c.Key = append(make([]byte, 0, len(r.Key)), r.Key...)
		}
		if r.Value != nil {
			c.Value = append(make([]byte, 0, len(r.Value)), r.Value...)
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

func validWord(ok bool) string {
	if ok {
		return "valid"
	}
	return "INVALID"
}

// hexPreview prints up to 11 bytes as spaced hex, eliding the rest.
func hexPreview(b []byte) string {
	const max = 11
	var sb strings.Builder
	for i, c := range b {
		if i == max {
			fmt.Fprintf(&sb, "… +%d", len(b)-max)
			break
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(hex.EncodeToString([]byte{c}))
	}
	return sb.String()
}
