package scan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Where kafka-dump-log stops.
//
// DumpLogSegments.mainNoExit catches whatever its dump throws, prints the
// exception's message and then its stack trace on stderr, and exits 1:
// the files after it are not dumped and the end-of-run reports (index
// mismatches, non-consecutive offsets) are not printed. A run with
// DumpLogSegments stops at the same places, after the same lines, with the
// same message (the printer prints it; kseg prints no Java stack trace): a record size below 14 where
// FileLogInputStream reads a header (a zero-filled tail longer than 17
// bytes included), a batch whose records do not decode under deep
// iteration (DefaultRecordBatch's iterator throws), a failed
// --index-sanity-check, a negative --max-bytes (FileRecords.slice), a file
// name without a dot or without an offset, and a file that does not exist.
// (kseg dump then exits 3: the input is corrupt, or not what it names;
// kseg kafka-dump-log exits 1, as Kafka.)

// StopError is such a stop; the printer (a Stopper) has printed its
// message.
type StopError struct{ Msg string }

func (e *StopError) Error() string { return e.Msg }

// IsStop reports whether err stopped the run where DumpLogSegments stops.
func IsStop(err error) bool {
	var ks *StopError
	return errors.As(err, &ks)
}

// kafkaStop stops the run with msg, printed by the printer when it is a
// Stopper.
func (st *Run) kafkaStop(msg string) error {
	if sp, ok := st.p.(Stopper); ok {
		return sp.Stop(msg)
	}
	return &StopError{Msg: msg}
}

// javaLength is String.length(): UTF-16 code units.
func javaLength(s string) int { return len(utf16.Encode([]rune(s))) }

// kafkaDumped reports whether DumpLogSegments dispatches on suffix
// (name.substring(name.lastIndexOf("."))) rather than printing "Ignoring
// unknown file": .log and .checkpoint (dumpLog), .index, .timeindex,
// .snapshot, .txnindex. partition.metadata, meta.properties and renamed
// files (.deleted, .cleaned, .swap) are ignored.
func kafkaDumped(suffix string) bool {
	switch suffix {
	case ".log", ".checkpoint", ".index", ".timeindex", ".snapshot", ".txnindex":
		return true
	}
	return false
}

// kafkaDispatch prints "Dumping <file>" and does what DumpLogSegments does
// with the name before it reads the file. handled means the file is done
// (ignored, or the run stopped); otherwise dump reads it.
func (st *Run) kafkaDispatch(f File) (handled bool, err error) {
	st.p.BeginFile(f)
	name := javaFileName(f.Path)
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		if !f.Named {
			// Found by expanding a directory, which kafka-dump-log
			// cannot be given: kseg's own extension ignores the file
			// rather than end a directory dump at leader-epoch-checkpoint.
			st.p.Unknown(f, "")
			st.p.EndFile(f)
			return true, nil
		}
		// name.substring(-1) throws StringIndexOutOfBoundsException.
		n := javaLength(name)
		return true, st.kafkaStop(fmt.Sprintf("begin -1, end %d, length %d", n, n))
	}
	suffix := name[dot:]
	if !kafkaDumped(suffix) {
		st.p.Unknown(f, "")
		st.p.EndFile(f)
		return true, nil
	}
	if (suffix == ".log" || suffix == ".checkpoint") && st.o.LogArgError != "" {
		// jopt converts --max-bytes when dumpLog's arguments are
		// evaluated, for the first .log or .checkpoint.
		return true, st.kafkaStop(st.o.LogArgError)
	}
	if suffix != ".snapshot" && suffix != ".checkpoint" {
		// Long.parseLong(name.split("\\.")[0]) (UnifiedLog.offsetFromFile
		// for .txnindex).
		prefix := name[:strings.IndexByte(name, '.')]
		if _, err := strconv.ParseInt(prefix, 10, 64); err != nil {
			return true, st.kafkaStop(`For input string: "` + prefix + `"`)
		}
	}
	if suffix == ".checkpoint" && name != "bootstrap.checkpoint" && f.Info.Kind != segment.KindMetadataSnapshot {
		// Snapshots.parse(path).get() on a name that is not
		// <offset>-<epoch>.checkpoint.
		return true, st.kafkaStop("No value present")
	}
	if f.Missing {
		switch suffix {
		case ".txnindex":
			// new TransactionIndex opens it READ|WRITE|CREATE: Kafka
			// creates an empty index and prints nothing for it. kseg
			// creates nothing.
			st.p.EndFile(f)
			return true, nil
		case ".log", ".checkpoint":
			st.p.LogStart(f)
		}
		// NoSuchFileException: its message is the path.
		return true, st.kafkaStop(f.Path)
	}
	if suffix == ".index" || suffix == ".timeindex" {
		// dumpIndex and dumpTimeIndex open <dir>/<base>.log first (and the
		// time index its .index): a missing one stops the tool.
		abs, _ := filepath.Abs(f.Path)
		base := filepath.Join(filepath.Dir(abs), name[:strings.IndexByte(name, '.')])
		need := []string{base + ".log"}
		if suffix == ".timeindex" {
			need = append(need, base+".index")
		}
		for _, p := range need {
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				return true, st.kafkaStop(p)
			}
		}
	}
	return false, nil
}

// javaFileName is File.getName(): what follows the last separator of the
// path (java.io.File drops a trailing one), "" for "" (filepath.Base
// would say ".").
func javaFileName(p string) string {
	p = strings.TrimRight(p, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// kafkaSlice is FileRecords.slice(0, maxBytes) for a negative --max-bytes,
// after dumpLog's header line.
func (st *Run) kafkaSlice(f File, lf *segment.LogFile) error {
	if !st.o.DumpLogSegments || !st.o.NegativeMaxBytes {
		return nil
	}
	return st.kafkaStop(fmt.Sprintf("Invalid size: %d in read from FileRecords(size=%d, file=%s, start=0, end=%d)",
		st.o.RawMaxBytes, lf.Size, f.Path, math.MaxInt32))
}

// kafkaTail is what FileLogInputStream.nextBatch does where kseg's scan of
// a .log stopped with tail t: FileLogInputStream reads the next 17-byte
// header whenever more than 17 bytes are left, throws on a size below 14
// (a zero-filled tail gives size 0), returns null (the end: "Found N
// invalid bytes") for an entry that runs past the end, and reads an entry
// whose magic is above 2 as a v2 batch. It returns where to scan on after
// such a batch, or false at the end of the file.
func (st *Run) kafkaTail(f File, lc *logCheck, lf *segment.LogFile, t segment.Tail, sum *LogSummary, lastRecord *int64) (int64, bool, error) {
	switch t.Kind {
	case segment.TailZeroFilled:
		if t.InvalidBytes() > decode.HeaderSizeUpToMagic {
			return 0, false, st.kafkaStop(recordSizeMessage(0, f.Path))
		}
	case segment.TailCorrupt:
		var hdr [decode.HeaderSizeUpToMagic]byte
		if _, err := lf.ReaderAt().ReadAt(hdr[:], t.ValidBytes); err != nil {
			return 0, false, fmt.Errorf("%s: read at position %d: %w", f.Path, t.ValidBytes, err)
		}
		size := int32(binary.BigEndian.Uint32(hdr[8:]))
		if size < decode.MinLegacyRecordSize {
			return 0, false, st.kafkaStop(recordSizeMessage(size, f.Path))
		}
		if int8(hdr[16]) > 2 {
			raw := make([]byte, decode.LogOverhead+int64(size)) // the scanner framed it: it fits
			if _, err := lf.ReaderAt().ReadAt(raw, t.ValidBytes); err != nil {
				return 0, false, fmt.Errorf("%s: read at position %d: %w", f.Path, t.ValidBytes, err)
			}
			if b, err := decode.ParseBatchAsKafka(raw); err == nil {
				for _, fd := range lc.check(t.ValidBytes, &b) {
					st.report(fd)
				}
				sum.count(&b)
				if err := st.renderSerial(&st.serialJob, f, t.ValidBytes, &b, sum, lastRecord); err != nil {
					return 0, false, err
				}
				return t.ValidBytes + int64(len(raw)), true, nil
			}
		}
		// Bytes kseg cannot read as Kafka would print them (a v2 batch
		// shorter than its header, a negative magic, a legacy message
		// whose key or value overruns it): kseg stops with its own account.
		return 0, false, st.kafkaStop(t.Err.Error())
	}
	return 0, false, nil
}

// recordSizeMessage is FileLogInputStream's CorruptRecordException.
func recordSizeMessage(size int32, path string) string {
	return fmt.Sprintf("Found record size %d smaller than minimum record overhead (%d) in file %s.", size, decode.MinLegacyRecordSize, path)
}
