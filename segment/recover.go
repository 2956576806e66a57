package segment

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/finding"
)

// Where broker recovery cuts a segment, written once. Kafka's
// LogSegment.recover (storage/src/main/java/org/apache/kafka/storage/
// internals/log/LogSegment.java) reads a segment's batches from the start
// and, for each one, calls batch.ensureValid (a CRC mismatch or a v2 batch
// under 61 bytes: CorruptRecordException), ensureOffsetInRange (an offset
// that does not fit the segment: LogSegmentOffsetOverflowException, which
// fails the load), appends the index entries (OffsetIndex.append: an
// offset not above the last one is InvalidOffsetException) and, for a v2
// batch, updates the producer state (a transaction marker whose control
// record does not parse: InvalidRecordException, after the batch was
// counted). FileLogInputStream ends the batches where an entry does not
// frame: a size below 14, an entry running past the end of the file (a
// torn write or a zero-filled preallocated tail). recover catches
// CorruptRecordException and InvalidRecordException and truncates the file
// at validBytes; LogLoader.recoverLog then deletes every later segment.
//
// kseg also cuts at a batch whose offsets go backwards: baseOffset is not
// covered by the CRC, and the broker's index append would throw
// InvalidOffsetException, after which recoverLog empties the whole
// segment.

// CutKind says why recovery truncates a segment before its end. Its
// String is the finding kind dump, repair and inject-barrier report.
type CutKind int

const (
	// CutNone: every byte is kept.
	CutNone CutKind = iota
	// CutZeroFilled: only zero bytes follow the last batch, as in a
	// preallocated segment (preallocate=true) after an unclean shutdown.
	// Recovery drops them; it is not damage.
	CutZeroFilled
	// CutCRCMismatch: a batch fails its CRC (batch.ensureValid).
	CutCRCMismatch
	// CutTorn: a batch header, or a batch, cut short by a crash: nothing
	// frames after it.
	CutTorn
	// CutCorruptBatch: bytes that do not frame a batch (a size below 14,
	// bad magic, a v2 batch under 61 bytes), or a batchLength running past
	// the end of the file while valid batches follow it (a corrupt length,
	// not a torn write).
	CutCorruptBatch
	// CutOffsetsBackwards: a batch does not start above the previous
	// batch's lastOffset.
	CutOffsetsBackwards
	// CutInvalidMarker: a transaction marker whose control record does
	// not parse. The marker is kept: the cut falls after it.
	CutInvalidMarker
	// CutOverlap: the segment's offsets run into the next segment's
	// (Overlap); the cut is LogSegment.truncateTo(the next base offset),
	// RecoverOptions.Before. Kafka's recovery does not make it: kseg
	// repair does.
	CutOverlap
)

// FindingKind is the finding a cut is reported as: dump's word for the
// damage (crc-mismatch, torn-tail, corrupt-batch, zero-tail,
// offset-out-of-order, invalid-marker); none for CutNone.
func (k CutKind) FindingKind() finding.Kind {
	switch k {
	case CutZeroFilled:
		return finding.ZeroTail
	case CutCRCMismatch:
		return finding.CRCMismatch
	case CutTorn:
		return finding.TornTail
	case CutCorruptBatch:
		return finding.CorruptBatch
	case CutOffsetsBackwards:
		return finding.OffsetOutOfOrder
	case CutInvalidMarker:
		return finding.InvalidMarker
	case CutOverlap:
		return finding.SegmentOverlap
	}
	return 0
}

func (k CutKind) String() string {
	if k == CutNone {
		return "none"
	}
	if f := k.FindingKind(); f != 0 {
		return f.String()
	}
	return fmt.Sprintf("CutKind(%d)", int(k))
}

// Damage reports whether the cut removes bytes a broker wrote as data (all
// but CutNone and CutZeroFilled).
func (k CutKind) Damage() bool { return k != CutNone && k != CutZeroFilled }

// Cut is where recovery truncates a segment, and why.
type Cut struct {
	Kind CutKind
	// Position is the first byte dropped: the segment's new size
	// (validBytes).
	Position int64
	// Bytes is the number of bytes dropped.
	Bytes int64
	// BaseOffset is the baseOffset of the batch the cut falls at (or,
	// for CutInvalidMarker, after); -1 when none frames there.
	BaseOffset int64
	// Err is the damage with file, position and field; nil for
	// CutZeroFilled.
	Err *decode.CorruptError
	// Message says it in one line for an operator, naming the file by its
	// base name.
	Message string
}

// Recovery is LogSegment.recover's account of one .log.
type Recovery struct {
	Path       string
	BaseOffset int64
	Size       int64
	// ValidBytes is where recovery truncates the segment: the end of the
	// last batch it keeps.
	ValidBytes int64
	// Batches is the number of batches kept; NextOffset the offset after
	// the last one (the base offset when none).
	Batches    int64
	NextOffset int64
	// Tail is the scanner's account of where framing ended.
	Tail Tail
	// Cut is nil when every byte is kept.
	Cut *Cut
	// Lost is the number of batches that frame after the cut (read on
	// past structural damage as dump does, with Resync); FramedEnd is the
	// offset after the last batch that frames, kept or lost.
	Lost      int64
	FramedEnd int64
}

// RecoverOptions tune Recover.
type RecoverOptions struct {
	// OnBatch, when set, is called with each batch recovery keeps, in log
	// order, with its position; b and its Raw are valid during the call
	// only. Returning false ends the scan there: the Recovery then
	// describes the batches read so far, with no cut.
	OnBatch func(pos int64, b *decode.Batch) bool
	// Progress, when set, is called with the bytes of the segment read
	// (every MiB or so, the rest when Recover returns): a progress line's
	// count, drawn by the caller.
	Progress func(n int64)
	// Before, when above 0, is the next segment's base offset, into which
	// this segment's offsets run (Overlap): the segment is cut at its
	// first batch whose lastOffset reaches it (CutOverlap), as
	// LogSegment.truncateTo(Before) cuts.
	Before int64
}

// recoverProgressStep is how far Recover reads between Progress calls.
const recoverProgressStep = 1 << 20

// OffsetOverflowError is a batch whose offsets do not fit its segment's
// int32 relative offsets (LogSegmentOffsetOverflowException): the broker
// splits such a segment at load rather than recovering it.
type OffsetOverflowError struct {
	Path       string
	Position   int64
	LastOffset int64
	BaseOffset int64
}

func (e *OffsetOverflowError) Error() string {
	return fmt.Sprintf("%s: batch at position %d: offset %d does not fit the segment's base offset %d: %v",
		e.Path, e.Position, e.LastOffset, e.BaseOffset, ErrOffsetOverflow)
}

func (e *OffsetOverflowError) Unwrap() error { return ErrOffsetOverflow }

// Recover reads the segment .log at path, of base offset baseOffset, as
// LogSegment.recover does and says where recovery would cut it. It changes
// nothing. An offset overflow is an *OffsetOverflowError; any other error
// is I/O.
func Recover(path string, baseOffset int64, opts RecoverOptions) (*Recovery, error) {
	lf, err := OpenLog(path)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	rc := &recoverer{r: &Recovery{Path: path, BaseOffset: baseOffset, Size: lf.Size, NextOffset: baseOffset, FramedEnd: baseOffset},
		lf: lf, name: filepath.Base(path), opts: opts, order: NewOffsetOrder(baseOffset)}
	r := rc.r
	defer func() { rc.tell(lf.Size) }()
	sc := lf.Scanner(ScanOptions{})
	for sc.Next() {
		stop, err := rc.batch(sc.Pos(), sc.Batch())
		if err != nil {
			return nil, err
		}
		if stop {
			return r, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	r.Tail = sc.Tail()
	if r.Cut != nil {
		return r, nil
	}
	if err := rc.tail(r.Tail); err != nil {
		return nil, err
	}
	return r, nil
}

// recoverer is one Recover run.
type recoverer struct {
	r     *Recovery
	lf    *LogFile
	name  string // the file's name, in messages
	opts  RecoverOptions
	order OffsetOrder
	told  int64 // bytes Progress was told of
}

// cut records where recovery cuts the segment.
func (rc *recoverer) cut(kind CutKind, pos, baseOffset int64, ce *decode.CorruptError, format string, args ...any) {
	rc.r.Cut = &Cut{Kind: kind, Position: pos, Bytes: rc.lf.Size - pos, BaseOffset: baseOffset, Err: ce, Message: fmt.Sprintf(format, args...)}
}

// tell reports the bytes read up to upto to Progress.
func (rc *recoverer) tell(upto int64) {
	if rc.opts.Progress != nil && upto > rc.told {
		rc.opts.Progress(upto - rc.told)
		rc.told = upto
	}
}

// batch checks the batch b at pos as LogSegment.recover does (its CRC,
// its offsets against the batch before it, a transaction marker's
// record) and keeps it or cuts there; after the cut it counts the
// batches lost. stop: OnBatch asked to stop.
func (rc *recoverer) batch(pos int64, b *decode.Batch) (stop bool, err error) {
	r, path, name := rc.r, rc.r.Path, rc.name
	if end := pos + b.Size(); end-rc.told >= recoverProgressStep {
		rc.tell(end)
	}
	r.FramedEnd = max(r.FramedEnd, b.NextOffset())
	if r.Cut != nil {
		r.Lost++
		return false, nil
	}
	if !b.CRCValid() {
		rc.cut(CutCRCMismatch, pos, b.BaseOffset,
			&decode.CorruptError{Path: path, Pos: pos, BaseOffset: b.BaseOffset, Field: "crc",
				Err: fmt.Errorf("%w: stored 0x%08x, computed 0x%08x", decode.ErrCRCMismatch, b.CRC, b.ComputeCRC())},
			"%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x", name, pos, b.BaseOffset, b.CRC, b.ComputeCRC())
		r.Lost++
		return false, nil
	}
	if rc.opts.Before > 0 && b.LastOffset() >= rc.opts.Before {
		rc.cut(CutOverlap, pos, b.BaseOffset, nil,
			"%s: batch at position %d (offsets %d..%d) reaches the next segment's base offset %d: the segments overlap; cut here, as LogSegment.truncateTo(%d) would",
			name, pos, b.BaseOffset, b.LastOffset(), rc.opts.Before, rc.opts.Before)
		r.Lost++
		return false, nil
	}
	prevLast, backwards, outOfRange := rc.order.Check(b)
	if outOfRange {
		return false, &OffsetOverflowError{Path: path, Position: pos, LastOffset: b.LastOffset(), BaseOffset: r.BaseOffset}
	}
	if backwards {
		first := rc.order.first(b)
		rc.cut(CutOffsetsBackwards, pos, b.BaseOffset,
			&decode.CorruptError{Path: path, Pos: pos, BaseOffset: b.BaseOffset, Field: "baseOffset",
				Err: fmt.Errorf("%w: %d is not above the previous batch's lastOffset %d", decode.ErrCorrupt, first, prevLast)},
			"%s: batch at position %d: baseOffset %d is not above the previous batch's lastOffset %d", name, pos, first, prevLast)
		r.Lost++
		return false, nil
	}
	r.ValidBytes = pos + b.Size()
	r.Batches++
	r.NextOffset = b.LastOffset() + 1
	if rc.opts.OnBatch != nil && !rc.opts.OnBatch(pos, b) {
		return true, nil
	}
	if msg := InvalidMarker(b); msg != "" {
		// InvalidRecordException from the marker: caught, the segment is
		// truncated after this batch (validBytes counts it).
		rc.cut(CutInvalidMarker, r.ValidBytes, b.BaseOffset,
			&decode.CorruptError{Path: path, Pos: pos, BaseOffset: b.BaseOffset, Field: "controlRecord", Err: fmt.Errorf("%w: %s", decode.ErrCorrupt, msg)},
			"%s: transaction marker at position %d (offset %d): %s; recovery truncates after it", name, pos, b.BaseOffset, msg)
	}
	return false, nil
}

// tail cuts the segment at the tail t its scan ended with, when no batch
// was cut before it: zeros, a torn header or batch, or bytes that do not
// frame (a corrupt length when valid batches follow).
func (rc *recoverer) tail(t Tail) error {
	r, name := rc.r, rc.name
	r.ValidBytes = t.ValidBytes
	switch t.Kind {
	case TailClean:
	case TailZeroFilled:
		rc.cut(CutZeroFilled, t.ValidBytes, -1, nil, "%s: %d zero bytes after position %d (a preallocated segment after an unclean shutdown)", name, t.InvalidBytes(), t.ValidBytes)
	case TailTornHeader:
		rc.cut(CutTorn, t.ValidBytes, t.Err.BaseOffset, t.Err, "%s (%d bytes after validBytes %d)", t.Err.Error(), t.InvalidBytes(), t.ValidBytes)
	default:
		// A torn batch, or bytes that do not frame: if valid batches
		// follow (dump resynchronises on them), the length or header is
		// corrupt rather than torn by a crash.
		n, err := r.countFramedAfter(rc.lf, t)
		if err != nil {
			return err
		}
		r.Lost += n
		switch {
		case t.Kind == TailTornBatch && n == 0:
			rc.cut(CutTorn, t.ValidBytes, t.Err.BaseOffset, t.Err, "%s (%d bytes after validBytes %d)", t.Err.Error(), t.InvalidBytes(), t.ValidBytes)
		case t.Kind == TailTornBatch:
			rc.cut(CutCorruptBatch, t.ValidBytes, t.Err.BaseOffset, t.Err,
				"%s: batch at position %d (baseOffset %d): batchLength is corrupt: the batch would run past the end of the file, yet %d valid batches follow; they are lost with it",
				name, t.ValidBytes, t.Err.BaseOffset, n)
		default:
			rc.cut(CutCorruptBatch, t.ValidBytes, t.Err.BaseOffset, t.Err, "%s (validBytes %d; %d valid batches follow the damage and are lost with it)", t.Err.Error(), t.ValidBytes, n)
		}
	}
	return nil
}

// countFramedAfter counts the batches that frame after structural damage
// ending a scan with tail t, resynchronising as dump does (ResyncPast).
func (r *Recovery) countFramedAfter(lf *LogFile, t Tail) (int64, error) {
	var n int64
	next := r.NextOffset
	for t.Kind == TailCorrupt || t.Kind == TailTornBatch {
		pos, found, err := ResyncPast(lf, t, next)
		if errors.Is(err, ErrResyncBudget) {
			return n, nil
		}
		if err != nil || !found {
			return n, err
		}
		sc := lf.Scanner(ScanOptions{Start: pos})
		for sc.Next() {
			n++
			next = sc.Batch().NextOffset()
			r.FramedEnd = max(r.FramedEnd, next)
		}
		if err := sc.Err(); err != nil {
			return n, err
		}
		t = sc.Tail()
	}
	return n, nil
}

// LoadRecoveryReason says why the broker recovers segment s at load even
// below the recovery point, "" when it does not: LogLoader.loadSegmentFiles
// runs LogSegment.sanityCheck, which wants the offset index to exist and
// the transaction index to pass TransactionIndex.sanityCheck, and
// recovers a segment that fails it.
func LoadRecoveryReason(s SegmentFiles) string {
	if s.Index == "" {
		return "its .index is missing (LogLoader recovers the segment)"
	}
	if s.TxnIndex != "" {
		x, err := ReadTxnIndex(s.TxnIndex)
		if err == nil {
			err = SanityCheckTxnIndex(&x, s.BaseOffset)
		}
		if err != nil {
			return fmt.Sprintf("its .txnindex fails the sanity check (%v)", err)
		}
	}
	return ""
}

// ResyncPast searches, after the structural damage that ended a scan of lf
// with tail t (TailCorrupt or TailTornBatch), for the next batch that
// frames and passes its CRC with offsets from minOffset on (Resync). A
// TailTornBatch with such a batch after it is not a torn write: its
// batchLength is corrupt (CutCorruptBatch). ErrResyncBudget says the
// search gave up.
func ResyncPast(lf *LogFile, t Tail, minOffset int64) (pos int64, found bool, err error) {
	return Resync(lf.ReaderAt(), t.ValidBytes+1, t.End, ResyncOptions{MinBaseOffset: minOffset})
}

// OffsetOrder follows the batches of a .log in log order with the offset
// rules LogSegment.recover's appends enforce: each batch starts above the
// previous batch's lastOffset (OffsetIndex.append: InvalidOffsetException)
// and, in a segment, its lastOffset fits the segment's int32 relative
// offsets (ensureOffsetInRange: LogSegmentOffsetOverflowException).
// Offsets and leader epochs are not covered by a batch's CRC, so a flipped
// bit there shows only in the batch's place in the log.
type OffsetOrder struct {
	base     int64 // the segment's base offset; -1 when the file is not a segment
	prevLast int64
	started  bool
}

// NewOffsetOrder follows the segment of base offset base (-1: a .log that
// is not a segment, whose offsets are not range-checked).
func NewOffsetOrder(base int64) OffsetOrder { return OffsetOrder{base: base} }

// first is the offset a batch's place is judged by: its baseOffset, or a
// v0/v1 wrapper's last offset, the only one it carries.
func (o *OffsetOrder) first(b *decode.Batch) int64 {
	if b.IsLegacy() {
		return b.LastOffset()
	}
	return b.BaseOffset
}

// Check judges b, the batch after those seen, and moves past it:
// backwards when it does not start above prevLast, the previous batch's
// lastOffset; outOfRange when its lastOffset does not fit the segment.
func (o *OffsetOrder) Check(b *decode.Batch) (prevLast int64, backwards, outOfRange bool) {
	last := b.LastOffset()
	outOfRange = o.base >= 0 && (last < o.base || last-o.base > math.MaxInt32)
	prevLast, backwards = o.prevLast, o.started && o.first(b) <= o.prevLast
	o.prevLast, o.started = last, true
	return prevLast, backwards, outOfRange
}

// Next is the lowest offset the next batch may carry: one past the last
// batch seen, else the segment's base offset (0 for a file that is not a
// segment).
func (o *OffsetOrder) Next() int64 {
	if o.started {
		return o.prevLast + 1
	}
	return max(o.base, 0)
}

// InvalidMarker reports why a transaction marker's control record does
// not parse ("" for any other batch, or a valid marker): what
// LogSegment.updateProducerState meets as an InvalidRecordException.
func InvalidMarker(b *decode.Batch) string {
	if !b.IsControl() || !b.HasProducerID() || b.RecordCount == 0 {
		return ""
	}
	var d decode.Decoder
	d.MaxDecompressed = 1 << 20
	rec, err := d.FirstRecord(b)
	if err != nil {
		return err.Error()
	}
	if rec == nil {
		return ""
	}
	key, value := rec.Key, rec.Value
	_, typ, err := decode.ParseControlKey(key)
	if err != nil {
		return err.Error()
	}
	if typ != decode.ControlAbort && typ != decode.ControlCommit {
		return ""
	}
	if _, err := decode.ParseControl(key, value); err != nil {
		return err.Error()
	}
	return ""
}
