package edit

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kseg/kseg/segment"
)

// Writing the journal. Its header (the plan) is written twice, whole and
// atomically: when the edit is prepared and when it starts committing.
// The commit steps after that are appended as records (journalRecord),
// in batches, never by rewriting the header: a mirror into 10,000 new
// segments commits 40,000 files, and rewriting a journal that names them
// all after each one made the commit quadratic.

const (
	// journalBuffer is the buffer the journal is written through.
	journalBuffer = 256 << 10
	// journalBatch is how many commit steps are recorded at a time.
	journalBatch = 1024
	// spliceMin is the least content streamed into the journal instead
	// of being marshalled with the plan.
	spliceMin = 4 << 10
)

// saveJournal writes the journal's header, with the job's plan as it is
// now, atomically (writeAtomic: the temporary file, fsync, rename, fsync
// the directory). The journal is the partition directory's owner's, as
// the partition's files are (see owner.go). step is the step's name.
func (a *applier) saveJournal(step string) error {
	if err := a.step(step); err != nil {
		return err
	}
	a.closeJournal()
	a.pending, a.npending = a.pending[:0], 0
	uid, gid := a.dirOwner()
	return a.writeAtomic(a.journalPath(), step, uid, gid, func(w io.Writer) error {
		return a.j.encode(w, a.writePlan)
	})
}

// writePlan writes the job's plan as JSON without holding it whole in
// memory: the file contents it carries (index files, producer snapshots:
// tens of megabytes for a million producers) are base64-encoded straight
// into w. While the plan is marshalled, each large Content is swapped for
// a placeholder: the bytes whose base64 is a marker no plan can hold
// otherwise ("kseg", a random nonce, the operation's index), so that
// json.Marshal writes the marker where the content goes; writing, the
// marker is replaced by the content's base64. The bytes written are
// exactly json.Marshal's of the plan.
func (a *applier) writePlan(w io.Writer) error {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	prefix := "kseg" + hex.EncodeToString(nonce[:])
	contents := map[int][]byte{}
	defer func() {
		for i, c := range contents {
			a.ops[i].Content = c
		}
	}()
	for i := range a.ops {
		if len(a.ops[i].Content) < spliceMin {
			continue
		}
		// 4 + 16 + 8 characters of the base64 alphabet, a multiple of 4:
		// the base64 of exactly these bytes.
		marker, err := base64.StdEncoding.DecodeString(fmt.Sprintf("%s%08d", prefix, i))
		if err != nil {
			return err
		}
		contents[i] = a.ops[i].Content
		a.ops[i].Content = marker
	}
	b, err := json.Marshal(a.job.Plan())
	if err != nil {
		return err
	}
	for n := len(contents); n > 0; n-- {
		k := bytes.Index(b, []byte(prefix))
		if k < 0 || k+len(prefix)+8 > len(b) {
			break
		}
		i, err := strconv.Atoi(string(b[k+len(prefix) : k+len(prefix)+8]))
		content, ok := contents[i]
		if err != nil || !ok {
			return fmt.Errorf("journal: a content placeholder without its file")
		}
		if _, err := w.Write(b[:k]); err != nil {
			return err
		}
		enc := base64.NewEncoder(base64.StdEncoding, w)
		if _, err := enc.Write(content); err != nil {
			return err
		}
		if err := enc.Close(); err != nil {
			return err
		}
		b = b[k+len(prefix)+8:]
	}
	_, err = w.Write(b)
	return err
}

// recordDone records that op's commit step is done: appended to the
// journal with the next batch (flushRecords).
func (a *applier) recordDone(op *FileOp) error {
	r := journalRecord{Done: op.Name}
	if op.Action == OpAppend {
		r.NewSHA256 = op.NewSHA256
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	a.pending = append(append(a.pending, b...), '\n')
	if a.npending++; a.npending >= journalBatch {
		return a.flushRecords()
	}
	return nil
}

// flushRecords makes the commit steps done since the last flush durable
// (an fsync of the partition directory for their renames and deletions,
// the appends fsynced themselves), then appends their records to the
// journal and fsyncs it.
//
// Why a batch is as safe as a step at a time: the records only save a
// rerun work, they decide nothing. A rerun (resume) and a rollback
// (restore) classify every file of the plan against its old and new
// content before they act (classify: the hashes sealed in the header, an
// append's fingerprint, a copy's sources), and skip a step only when its
// file is its new content; a record whose rename a crash lost is redone,
// a lost record is found done by the file itself. What must be durable
// before the next state is durable still is: every staged file and its
// name before the committing header (prepare), and every commit step
// before the journal goes (commit's last flush, then finish).
func (a *applier) flushRecords() error {
	if a.npending == 0 {
		return nil
	}
	if err := a.step("journal:sync"); err != nil {
		return err
	}
	if err := syncDir(a.dir); err != nil {
		return err
	}
	if a.jf == nil {
		f, err := os.OpenFile(a.journalPath(), os.O_WRONLY|os.O_APPEND|oNoFollow, 0)
		if err != nil {
			return err
		}
		a.jf = f
	}
	if _, err := a.writer(a.journalPath(), a.jf).Write(a.pending); err != nil {
		return err
	}
	if err := a.jf.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", a.journalPath(), err)
	}
	a.pending, a.npending = a.pending[:0], 0
	return nil
}

// closeJournal closes the journal opened for appending, if it is.
func (a *applier) closeJournal() {
	if a.jf != nil {
		a.jf.Close()
		a.jf = nil
	}
}

// checkJournalSize refuses an edit whose journal would be larger than
// ReadJournal reads back (maxJournalBytes): an edit interrupted then
// could be neither finished nor rolled back. The plan's file contents
// (base64 in the journal) and a generous allowance per operation bound it.
func (a *applier) checkJournalSize() error {
	n := int64(1 << 20)
	for _, op := range a.ops {
		n += int64(len(op.Content))*4/3 + 1024 + int64(len(op.Sources))*512
	}
	if n > maxJournalBytes {
		return Refuse(RefuseTooLarge, a.dir, "the edit's journal would hold about %d bytes, more than the %d kseg reads back after a crash: split it into smaller edits (a mirror can stop at an offset and continue from there)", n, int64(maxJournalBytes))
	}
	return nil
}

// writeAtomic writes path through path.tmp, with what write writes:
// created with O_EXCL, given its mode (and, as root, the owner uid:gid:
// -1 leaves kseg's), fsynced, renamed over path, the directory fsynced. A
// leftover path.tmp is kseg's own (the journal or the manifest), so it is
// replaced.
func (a *applier) writeAtomic(path, step string, uid, gid int, write func(w io.Writer) error) error {
	tmp := path + segment.TempSuffix
	f, fail, err := createFresh(tmp, oNoFollow, 0o644)
	if err != nil {
		return err
	}
	if err := ownAs(f, 0o644, uid, gid); err != nil {
		return fail(err)
	}
	bw := bufio.NewWriterSize(a.writer(tmp, f), journalBuffer)
	if err := write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := a.syncAfter(step+":tmp", f, tmp, fail); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}
