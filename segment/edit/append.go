package edit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kseg/kseg/segment"
)

// An append (OpAppend) changes a file the way Kafka changes its active
// segment: LogSegment.append writes after the last byte and never touches
// the bytes before it. The engine does the same, in place: the file's
// first OldSize bytes stay, and the new bytes (Content, then Sources) are
// written after them at commit, once the journal says committing. Nothing
// is copied into the backup or staged beside the file: the backup of an
// append is "truncate to OldSize", which the manifest records with a
// fingerprint of the bytes before OldSize (Restore: `truncate -s OldSize`).
//
// A crash in the middle of an append leaves a torn tail: the old bytes,
// then part of the new ones. A broker would find that tail on load
// (LogSegment.recover truncates at the first invalid batch, and a torn tail
// of whole batches would be kept), so it is the journal, not a broker, that
// must finish it; while the journal exists kseg's readers (dump,
// replay-psm) report pending-edit. A rerun truncates the torn tail and
// appends again; a rollback truncates it.
//
// For an append op, OldSHA256 is the fingerprint (fingerprintOf) and
// NewSHA256 the SHA-256 of the appended bytes alone, [OldSize, NewSize):
// known at seal for Content alone, else taken on the read-back after the
// append and recorded in the journal with the step done.

// FingerprintBytes is how many bytes before an append's OldSize (at most)
// its fingerprint hashes.
const FingerprintBytes = 64 << 10

// fingerprintOf is the SHA-256 of the last FingerprintBytes (or fewer)
// bytes before size in path: what an append checks the kept bytes
// against, instead of hashing a whole segment.
func fingerprintOf(path string, size int64) (string, error) {
	from := max(0, size-FingerprintBytes)
	return hashRange(path, from, size-from)
}

// hashRange is the SHA-256 of [pos, pos+n) of path; a shorter file is an
// error.
func hashRange(path string, pos, n int64) (string, error) {
	f, err := segment.OpenFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	got, err := io.Copy(h, io.NewSectionReader(f, pos, n))
	if err != nil {
		return "", err
	}
	if got != n {
		return "", fmt.Errorf("%s: %d bytes at position %d, need %d", path, got, pos, n)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sealAppend checks an append's file is still OldSize bytes and takes its
// fingerprint (and the new bytes' hash when they are Content alone).
func (a *applier) sealAppend(op *FileOp, fi os.FileInfo) error {
	path := a.path(op.Name)
	if fi.Size() != op.OldSize {
		return Refuse(RefuseChanged, path, "%d bytes, the plan saw %d", fi.Size(), op.OldSize)
	}
	var err error
	if op.OldSHA256, err = fingerprintOf(path, op.OldSize); err != nil {
		return err
	}
	op.NewSHA256 = ""
	if len(op.Sources) == 0 {
		op.NewSHA256, err = contentHash(op.Content, nil)
	}
	return err
}

// classifyAppend tells an append's file apart: OldSize bytes with the
// fingerprint is old; NewSize bytes with the fingerprint and the appended
// bytes' recorded hash is new; anything between, with the fingerprint, is
// a torn append; anything else (shorter, longer, another fingerprint) is
// not this edit's.
func classifyAppend(path string, op *FileOp) (fileState, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return stateOther, nil
	}
	if err != nil {
		return stateOther, err
	}
	if !st.Mode().IsRegular() || st.Size() < op.OldSize || st.Size() > op.NewSize {
		return stateOther, nil
	}
	fp, err := fingerprintOf(path, op.OldSize)
	if err != nil {
		return stateOther, err
	}
	switch {
	case fp != op.OldSHA256:
		return stateOther, nil
	case st.Size() == op.OldSize:
		return stateOld, nil
	case st.Size() == op.NewSize && op.NewSHA256 != "":
		sum, err := hashRange(path, op.OldSize, op.NewSize-op.OldSize)
		if err != nil {
			return stateOther, err
		}
		if sum == op.NewSHA256 {
			return stateNew, nil
		}
	}
	return stateTorn, nil
}

// appendTo commits an append: truncate to OldSize (a torn tail of an
// interrupted run goes; nothing when there is none), write Content and
// copy the Sources after it (copy_file_range, as staging does), fsync,
// and read back [OldSize, NewSize) with the staging read-back's checks
// (the bytes are the sources', whole batches with valid CRCs, each told
// to a StageWatcher at its position in the file). The appended bytes'
// hash becomes op.NewSHA256, for the journal to record.
func (a *applier) appendTo(op *FileOp) error {
	path := a.path(op.Name)
	f, err := openAppend(path)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if linkCount(st) > 1 {
		// Another name shares the inode (a destination seeded with cp -al
		// from its source, a snapshot): writing in place would write into
		// that file too.
		f.Close()
		return a.appendByCopy(op)
	}
	if st.Size() < op.OldSize {
		return fail(Refuse(RefuseJournalMismatch, path, "%d bytes, shorter than the %d the %s appends to", st.Size(), op.OldSize, a.kind.Noun))
	}
	if err := f.Truncate(op.OldSize); err != nil {
		return fail(err)
	}
	if _, err := f.Seek(op.OldSize, io.SeekStart); err != nil {
		return fail(err)
	}
	return a.appendBytes(op, f, path, path)
}

// appendBytes writes op's new bytes (Content, then the Sources; the
// "append:" step falls in the middle of the copied bytes, so that a crash
// there leaves the torn tail a rerun or a rollback must deal with) through
// f, positioned after the file's first OldSize bytes, fsyncs f while
// reading them back from name (checkStaged's checks: the bytes are the
// sources', whole batches with valid CRCs, each told to a StageWatcher at
// its position in the file), closes f, and checks they are the planned
// ones. The appended bytes' hash becomes op.NewSHA256 (for the journal to
// record) and f as it was after its fsync op.Staged; path is the file
// appended to, for messages. f is closed in every case.
func (a *applier) appendBytes(op *FileOp, f *os.File, name, path string) error {
	fail := func(err error) error {
		f.Close()
		return err
	}
	w := a.writer(name, f)
	if _, err := w.Write(op.Content); err != nil {
		return fail(err)
	}
	if a.o.Progress != nil && len(op.Content) > 0 {
		a.o.Progress(int64(len(op.Content)))
	}
	var n int64
	for _, r := range op.Sources {
		n += r.Len
	}
	first, rest := splitRanges(op.Sources, n/2)
	for _, r := range first {
		if err := copyRangeProgress(w, r, a.o.Progress); err != nil {
			return fail(err)
		}
	}
	if err := a.step("append:" + op.Name); err != nil {
		return fail(err)
	}
	for _, r := range rest {
		if err := copyRangeProgress(w, r, a.o.Progress); err != nil {
			return fail(err)
		}
	}
	synced := make(chan error, 1)
	go func() { synced <- f.Sync() }()
	fi, _ := segment.ParseFileName(op.Name)
	var watch func(int64, []byte)
	if sw, ok := a.job.(StageWatcher); ok && len(op.Sources) > 0 && fi.Kind == segment.KindLog {
		watch = sw.WatchStaged(op)
	}
	op.Staged = nil
	sum, _, cerr := checkStaged(name, "", op.OldSize, true, false, op.Content, op.Sources, fi.Kind == segment.KindLog, watch)
	if err := <-synced; err != nil {
		return fail(err)
	}
	after, serr := f.Stat()
	if err := f.Close(); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if op.NewSHA256 != "" && sum != op.NewSHA256 {
		return Refuse(RefuseChanged, path, "the appended bytes are not the planned content")
	}
	op.NewSHA256 = sum
	if serr == nil {
		op.Staged = after
	}
	return nil
}

// openAppend opens a regular file kseg appends to for writing
// (openAppendFlags: on Unix without following a symbolic link or blocking
// on a FIFO), and refuses anything but a regular file.
func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, openAppendFlags, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = Refuse(RefuseNotRegular, path, "%s, not a regular file: kseg appends only to the regular files Kafka writes", modeName(fi.Mode()))
		}
		return nil, err
	}
	return f, nil
}

// An append writes in place only into a file whose link count is 1. A
// file with another hard link (a partition seeded with cp -al, a
// snapshot made with hard links) shares its inode with that link: an
// append or a truncation in place would change the other file too (a
// source partition would suddenly hold the destination's offsets). Such a
// file is copied first: its kept bytes and the new ones go to the staged
// file, renamed over it, and the other link keeps its bytes.

// appendByCopy commits an append to a file with more than one link: the
// staged copy of its first OldSize bytes (copy_file_range), then Content
// and the Sources, fsynced, read back as appendTo reads back what it
// appends, the kept bytes' fingerprint checked, renamed over the file.
func (a *applier) appendByCopy(op *FileOp) error {
	path, staged := a.path(op.Name), a.staged(op.Name)
	f, err := a.copyKept(op, path, staged)
	if err != nil {
		return err
	}
	if err := a.appendBytes(op, f, staged, path); err != nil {
		if !isFault(err) {
			os.Remove(staged)
		}
		return err
	}
	// The inode read back and verified is the one renamed into place
	// (op.Staged).
	return os.Rename(staged, path)
}

// copyKept creates staged (mode and owner of op's file) holding the first
// OldSize bytes of path, whose fingerprint must be op's, and returns it
// open for writing after them.
func (a *applier) copyKept(op *FileOp, path, staged string) (*os.File, error) {
	f, failFile, err := createFresh(staged, oNoFollow, os.FileMode(op.Perm))
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) { return nil, failFile(err) }
	if err := ownAs(f, op.Perm, op.UID, op.GID); err != nil {
		return fail(err)
	}
	src, err := segment.OpenFile(path)
	if err != nil {
		return fail(err)
	}
	n, err := copyN(a.writer(staged, f), src, op.OldSize, nil)
	src.Close()
	if err != nil {
		return fail(err)
	}
	if n != op.OldSize {
		return fail(Refuse(RefuseJournalMismatch, path, "%d bytes, shorter than the %d the %s appends to", n, op.OldSize, a.kind.Noun))
	}
	if fp, err := fingerprintOf(staged, op.OldSize); err != nil {
		return fail(err)
	} else if fp != op.OldSHA256 {
		return fail(Refuse(RefuseChanged, path, "its first %d bytes are not those the %s appends to", op.OldSize, a.kind.Noun))
	}
	return f, nil
}

// truncateBack undoes an append to op's file: back to its first OldSize
// bytes, fsynced; through a copy (copyKept, renamed over it) when another
// hard link shares the file.
func (a *applier) truncateBack(op *FileOp) error {
	path := a.path(op.Name)
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if linkCount(fi) <= 1 {
		return truncateBack(path, op.OldSize)
	}
	staged := a.staged(op.Name)
	f, err := a.copyKept(op, path, staged)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(staged)
		return fmt.Errorf("fsync %s: %w", staged, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(staged)
		return err
	}
	return os.Rename(staged, path)
}

// truncateBack undoes an append in place: the file goes back to its first
// OldSize bytes, fsynced.
func truncateBack(path string, size int64) error {
	f, err := openAppend(path)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return f.Close()
}

// splitRanges cuts source ranges at byte at of their concatenation.
func splitRanges(rs []SourceRange, at int64) (first, rest []SourceRange) {
	for i, r := range rs {
		switch {
		case at >= r.Len:
			first = append(first, r)
			at -= r.Len
		case at > 0:
			first = append(first, SourceRange{Path: r.Path, Pos: r.Pos, Len: at})
			rest = append(rest, SourceRange{Path: r.Path, Pos: r.Pos + at, Len: r.Len - at})
			return first, append(rest, rs[i+1:]...)
		default:
			return first, append(rest, rs[i:]...)
		}
	}
	return first, rest
}
