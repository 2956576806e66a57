package scan

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// Run is one run over files: what it accumulates across them (finding
// counts, the batches selected, the partitions' last logs) and how it
// renders batches (serially, or on workers: pipeline.go, crc.go). Only
// the goroutine that calls Files uses it.
type Run struct {
	// Progress, when set, hears how far the run has read.
	Progress Progress
	// FileError, when set, hears of each file that could not be read
	// (an I/O error; the run goes on with the next file).
	FileError func(err error)
	// Observer, when set, sees every batch of every .log the run reads
	// (kseg check feeds its producer-state replay from the run's walk).
	Observer Observer

	opts     Options
	o        *Options // &opts
	p        Printer
	errors   int // findings of severity error
	warnings int

	// render renders batches on the calling goroutine (serial path),
	// with serialJob; pipe, when set, renders them on workers
	// (pipeline.go, crc.go).
	render    *Renderer
	serialJob batchJob
	pipe      jobRunner

	// sel: the batches the filters selected, per partition directory;
	// fileEntries and fileSelected count the entries of the file being
	// read (select.go).
	sel                       selectedBatches
	fileEntries, fileSelected int

	// lastLogs caches, per partition directory, its last .log
	// (logstart.go); partDirs holds directories the caller has listed
	// already (Listed), by path.
	lastLogs map[string]string
	partDirs map[string]*segment.PartitionDir

	// later holds the files still to be read by this Files call, and
	// verified the index problems found, ahead of their turn, in a walk
	// over the segment's log (entries.go, walkverify.go): both indexes
	// of a segment checked in one pass over its log.
	later    map[string]string // cleaned path → the path as given
	verified map[string]*stashedVerify
	// walkVerify verifies indexes in the walk over their log
	// (Options.VerifyIndexesInWalk).
	walkVerify *indexWalk

	// The file being read (its number, for Progress), and the position
	// in it at which to tell Progress again.
	prog     Progress
	progFile int
	progNext int64
}

// Progress hears how far a run has read. Scanned says that file number i
// (counted from Files' first) has been read up to byte pos and returns
// the position at which to call it again; FileDone that it is done. Both
// may be called from several runs' goroutines at once, each file by one.
type Progress interface {
	Scanned(i int, pos int64) int64
	FileDone(i int)
}

// noProgress is the Progress of a run that has none.
type noProgress struct{}

func (noProgress) Scanned(int, int64) int64 { return math.MaxInt64 }
func (noProgress) FileDone(int)             {}

// Errors is the number of findings of severity error the run reported;
// Warnings of severity warning.
func (st *Run) Errors() int   { return st.errors }
func (st *Run) Warnings() int { return st.warnings }

// Printer is the run's printer.
func (st *Run) Printer() Printer { return st.p }

// Listed hands the run a partition directory the caller has listed
// already, so that the run does not list it again.
func (st *Run) Listed(pd *segment.PartitionDir) {
	if st.partDirs == nil {
		st.partDirs = map[string]*segment.PartitionDir{}
	}
	st.partDirs[filepath.Clean(pd.Path)] = pd
}

// Files reads files in order, rendering each through the printer; first
// is the number of files[0] for Progress. An I/O error on one file goes
// to FileError and does not hide the others; the last one is returned as
// ioErr. err is the context's error when the run was cancelled, or a
// *StopError where DumpLogSegments stops.
func (st *Run) Files(ctx context.Context, files []File, first int) (ioErr, err error) {
	prog := st.Progress
	if prog == nil {
		prog = noProgress{}
	}
	st.prog = prog
	if st.o.VerifyIndex {
		st.later = make(map[string]string, len(files))
		for _, f := range files {
			st.later[filepath.Clean(f.Path)] = f.Path
		}
	}
	for i, f := range files {
		delete(st.later, filepath.Clean(f.Path))
		if err := ctx.Err(); err != nil {
			return ioErr, err
		}
		st.progFile = first + i
		st.progNext = prog.Scanned(first+i, 0)
		err := st.one(f)
		prog.FileDone(first + i)
		if IsStop(err) {
			return ioErr, err
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) || !isFinding(err) {
				if st.FileError != nil {
					st.FileError(err)
				}
				ioErr = err
				continue
			}
		}
	}
	return ioErr, nil
}

func isFinding(err error) bool {
	_, ok := decode.AsCorrupt(err)
	return ok
}

// fileFinding is the finding of kind k in file, at byte pos (-1 when
// not tied to a byte), in the batch at baseOffset (-1 when not tied to a
// batch; the finding's Offset).
func fileFinding(k finding.Kind, file string, pos, baseOffset int64, msg string) finding.Finding {
	f := finding.New(k, msg)
	f.File, f.Position, f.Offset = file, pos, baseOffset
	return f
}

func (st *Run) count(f finding.Finding) {
	switch f.Severity() {
	case finding.Error:
		st.errors++
	case finding.Warning:
		st.warnings++
	}
}

func (st *Run) report(f finding.Finding) {
	st.count(f)
	st.p.Finding(f)
}

// reportIndexProblem reports an index-mismatch or timeindex-mismatch
// finding with the failed check, for a printer that summarizes them
// (IndexProblemPrinter); the others render the finding.
func (st *Run) reportIndexProblem(f finding.Finding, pr *segment.IndexProblem) {
	ip, ok := st.p.(IndexProblemPrinter)
	if !ok {
		st.report(f)
		return
	}
	st.count(f)
	ip.IndexProblem(f, pr)
}

// reportCorrupt turns a CorruptError into a finding of the given kind.
func (st *Run) reportCorrupt(kind finding.Kind, ce *decode.CorruptError) {
	st.report(fileFinding(kind, ce.Path, ce.Pos, ce.BaseOffset, ce.Error()))
}

// one reads file f.
func (st *Run) one(f File) error {
	st.fileEntries, st.fileSelected = 0, 0
	if st.o.DumpLogSegments {
		// Dumping <file>, then kafka-dump-log's dispatch on the name
		// (dumplog.go).
		if handled, err := st.kafkaDispatch(f); handled {
			return err
		}
	} else {
		st.p.BeginFile(f)
	}
	var err error
	switch f.Info.Kind {
	case segment.KindLog, segment.KindMetadataSnapshot, segment.KindBootstrapCheckpoint:
		if f.Info.Transient() {
			st.p.Unknown(f, "transient file ("+f.Info.Suffix+"), the broker removes or renames it at the next load")
			break
		}
		err = st.dumpLog(f)
		if err == nil && f.Info.Kind == segment.KindLog {
			err = st.checkLogStart(f)
		}
	case segment.KindIndex:
		err = st.dumpOffsetIndex(f)
	case segment.KindTimeIndex:
		err = st.dumpTimeIndex(f)
	case segment.KindTxnIndex:
		err = st.dumpTxnIndex(f)
	case segment.KindProducerSnapshot:
		err = st.dumpSnapshot(f)
	case segment.KindLeaderEpochCheckpoint:
		err = st.dumpLeaderEpochs(f)
	case segment.KindPartitionMetadata:
		err = st.dumpPartitionMetadata(f)
	case segment.KindRecoveryPointCheckpoint, segment.KindLogStartOffsetCheckpoint,
		segment.KindReplicationOffsetCheckpoint, segment.KindCleanerOffsetCheckpoint:
		err = st.dumpOffsetCheckpoint(f)
	case segment.KindMetaProperties, segment.KindCleanShutdown, segment.KindQuorumState:
		err = st.dumpTextFile(f)
	default:
		st.p.Unknown(f, "not a Kafka file kseg decodes")
		if base := filepath.Base(f.Path); edit.IsJournal(base) && !strings.HasSuffix(base, segment.TempSuffix) {
			if pf, ok := edit.PendingFinding(filepath.Dir(f.Path)); ok {
				st.report(pf)
			}
		}
	}
	if ce, ok := decode.AsCorrupt(err); ok {
		st.reportCorrupt(finding.CorruptFile, ce.At(f.Path, 0))
		err = nil
	}
	f.Entries, f.Selected = st.fileEntries, st.fileSelected
	st.p.EndFile(f)
	return err
}
