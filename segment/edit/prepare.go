// Steps 4 and 5 of Apply: the backups (a manifest first, then a verified
// O_EXCL copy of every file that changes or goes) and the staged new
// contents, read back while they are fsynced. Nothing in the partition
// changes here.

package edit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// backupDir resolves and checks the backup directory: Options.BackupDir,
// else a new kseg-backup-<partition>-<time> folder in Options.BackupRoot
// (the working directory when that is ""). It is refused inside the log
// directory being edited and inside anything that is, or looks like, a
// Kafka log directory or partition directory (refuseKafkaDir), and when it
// already holds a file the backup would write.
func (a *applier) backupDir() (string, error) {
	bd := a.o.BackupDir
	if bd == "" {
		root := a.o.BackupRoot
		if root == "" {
			cwd, err := os.Getwd()
			if err != nil {
				return "", err
			}
			root = cwd
		}
		stamp := a.now().UTC().Format("20060102T150405.000Z")
		bd = filepath.Join(root, fmt.Sprintf("kseg-backup-%s-%s", filepath.Base(a.dir), stamp))
		for i := 2; ; i++ {
			if _, err := os.Lstat(bd); errors.Is(err, os.ErrNotExist) {
				break
			}
			bd = filepath.Join(root, fmt.Sprintf("kseg-backup-%s-%s-%d", filepath.Base(a.dir), stamp, i))
		}
	}
	bd, err := filepath.Abs(bd)
	if err != nil {
		return "", err
	}
	if err := refuseKafkaDir(bd, a.logDir); err != nil {
		re := err.(*RefusalError)
		re.Remedy = RemedyBackupDir
		return "", re
	}
	if st, err := os.Stat(bd); err == nil {
		if !st.IsDir() {
			return "", Refuse(RefuseBackupDir, bd, "not a directory")
		}
		for _, name := range append(a.backupNames(), BackupManifestName) {
			if _, err := os.Lstat(filepath.Join(bd, name)); err == nil {
				return "", Refuse(RefuseBackupDir, filepath.Join(bd, name), "already exists; a backup is never overwritten")
			}
		}
	}
	return bd, nil
}

// backupNames are the files a backup copies: every file that changes or
// goes.
func (a *applier) backupNames() []string {
	var names []string
	for _, op := range a.ops {
		if op.copiedToBackup() {
			names = append(names, op.Name)
		}
	}
	return names
}

// prepare makes the backups and stages the new contents. Nothing in the
// partition changes; a file already backed up or staged by an interrupted
// run is verified and reused or redone.
func (a *applier) prepare() error {
	bd := a.j.BackupDir
	if err := a.step("backup-dir"); err != nil {
		return err
	}
	// A backup holds a partition's data: the folders made to reach it
	// (a state directory's kseg/backups) are private to this user.
	if err := os.MkdirAll(filepath.Dir(bd), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(bd, 0o755); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(bd)); err != nil {
		return err
	}
	// The manifest goes first: a backup directory without one holds no
	// backup, which is how a rerun or a rollback tells this run's backup
	// from a directory a journal merely names.
	if err := a.step("backup-manifest"); err != nil {
		return err
	}
	if err := a.writeManifest(false); err != nil {
		return err
	}
	if err := a.eachOp("backup:", (*FileOp).copiedToBackup, a.backup); err != nil {
		return err
	}
	if err := a.eachOp("stage:", (*FileOp).stagedBeside, func(op *FileOp) error {
		return a.stage(op, a.path(op.Name), op.KeepPrefix, op.Content, op.Sources, op.NewSHA256, "stage:"+op.Name)
	}); err != nil {
		return err
	}
	// One fsync of the directory makes every staged file's name durable
	// before the committing journal says they are complete.
	return syncDir(a.dir)
}

// eachOp runs do on each op that which selects, in plan order, each
// after the step prefix+name (where an injected fault stops the run, as a
// crash would).
func (a *applier) eachOp(prefix string, which func(*FileOp) bool, do func(op *FileOp) error) error {
	for i := range a.ops {
		op := &a.ops[i]
		if !which(op) {
			continue
		}
		if err := a.step(prefix + op.Name); err != nil {
			return err
		}
		if err := do(op); err != nil {
			return err
		}
	}
	return nil
}

// backup copies a file into the backup directory: to name.partial created
// with O_EXCL, fsynced, checked against the sealed hash, then renamed to
// name (never over an existing file). An existing backup of an
// interrupted run is reused only if its hash is right.
func (a *applier) backup(op *FileOp) error {
	bd := a.j.BackupDir
	dst := filepath.Join(bd, op.Name)
	if _, err := os.Lstat(dst); err == nil {
		sum, _, _, err := hashFile(dst, -1, nil, nil)
		if err != nil {
			return err
		}
		if sum != op.OldSHA256 {
			return Refuse(RefuseBackupDir, dst, "exists and is not a copy of %s", op.Name)
		}
		// An interrupted run may have stopped between the link that named
		// this backup and the fsync of its directory: make both durable
		// before anything relies on them.
		if err := syncFile(dst); err != nil {
			return err
		}
		return syncDir(bd)
	}
	partial := dst + partialSuffix
	if err := os.Remove(partial); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	src, err := segment.OpenFile(a.path(op.Name))
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	f, fail, err := createExcl(partial, 0, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := copyN(a.writer(partial, f), src, -1, a.o.Progress); err != nil {
		return fail(err)
	}
	if err := a.syncAfter("backup:"+op.Name+":tmp", f, partial, fail); err != nil {
		return err
	}
	sum, _, _, err := hashFile(partial, -1, nil, nil)
	if err != nil {
		return err
	}
	if sum != op.OldSHA256 {
		return Refuse(RefuseChanged, a.path(op.Name), "changed while it was being backed up")
	}
	if err := os.Link(partial, dst); err != nil {
		return err
	}
	if err := os.Remove(partial); err != nil {
		return err
	}
	return syncDir(bd)
}

// stage writes "keep bytes of src, then content, then the source ranges"
// to name.kseg-new next to the target, with the target's mode and owner,
// fsyncs it and reads it back once (checkStaged): its hash must be want,
// or, with want "" (new content holding source ranges, hashed only here),
// it must start with the sealed prefix and hold the source ranges byte for
// byte, and its hash becomes op.NewSHA256. The caller fsyncs the directory.
func (a *applier) stage(op *FileOp, src string, keep int64, content []byte, srcs []SourceRange, want, step string) error {
	staged := a.staged(op.Name)
	f, fail, err := createFresh(staged, 0, os.FileMode(op.Perm))
	if err != nil {
		return err
	}
	// The mode and owner before the first byte: a staged file that a
	// crash leaves, and that a rerun renames into place, is already what
	// the broker's user can open.
	if err := ownAs(f, op.Perm, op.UID, op.GID); err != nil {
		return fail(err)
	}
	if err := a.writeStaged(a.writer(staged, f), src, keep, content, srcs); err != nil {
		return fail(err)
	}
	if err := a.step(step + ":tmp"); err != nil {
		return fail(err)
	}
	// The read-back runs while the kernel writes the file out: fsync
	// waits on the disk, the hash and the comparison need a core, so
	// neither waits for the other.
	synced := make(chan error, 1)
	go func() { synced <- f.Sync() }()
	prefixFrom := ""
	if want == "" && op.headSHA256 == "" && keep > 0 {
		prefixFrom = src
	}
	fi, _ := segment.ParseFileName(op.Name)
	batches := fi.Kind == segment.KindLog && !op.Verbatim
	watch, fr := a.stageWatch(op, len(srcs) > 0, batches)
	op.Staged = nil
	sum, head, cerr := checkStaged(staged, prefixFrom, keep, false, bySources(op), content, srcs, batches, watch)
	if err := <-synced; err != nil {
		return fail(err)
	}
	stagedAs, serr := f.Stat()
	if err := f.Close(); err != nil {
		os.Remove(staged)
		return err
	}
	if cerr != nil {
		return cerr
	}
	switch {
	case want != "":
		if sum != want {
			return Refuse(RefuseChanged, src, "the staged copy does not have the expected content (did %s change?)", src)
		}
	case op.headSHA256 != "" && head != op.headSHA256:
		return Refuse(RefuseChanged, src, "the staged copy does not start with the content sealed (did %s change?)", src)
	default:
		// The staged file is the kept prefix and Content as sealed (or,
		// for a run resumed from its journal, as the file holds them),
		// followed by the source ranges byte for byte: its hash is the
		// new content's, which the committing journal records.
		op.NewSHA256 = sum
	}
	if fr != nil {
		op.NewFraming = fr.sum()
	}
	if serr == nil {
		op.Staged = stagedAs
	}
	return nil
}

// writeStaged writes a staged file's bytes to w: keep bytes of src, then
// content, then the source ranges.
func (a *applier) writeStaged(w io.Writer, src string, keep int64, content []byte, srcs []SourceRange) error {
	if keep > 0 {
		s, err := segment.OpenFile(src)
		if err != nil {
			return err
		}
		// *os.File.ReadFrom with an io.LimitedReader over a file uses
		// copy_file_range on Linux: the kept prefix is copied in the
		// kernel (and shared, on file systems with reflinks).
		n, err := copyN(w, s, keep, a.o.Progress)
		s.Close()
		if err != nil {
			return err
		}
		if n != keep {
			return fmt.Errorf("%s: %d bytes, need %d", src, n, keep)
		}
	}
	if _, err := w.Write(content); err != nil {
		return err
	}
	if a.o.Progress != nil && len(content) > 0 {
		a.o.Progress(int64(len(content)))
	}
	for _, r := range srcs {
		if err := copyRangeProgress(w, r, a.o.Progress); err != nil {
			return err
		}
	}
	return nil
}

// stageWatch is what sees the batches of op's staged copy as they verify
// (nil: nothing), batches saying the copy is a .log read batch by batch:
// the job's StageWatcher for a copy of source ranges (copied), and the
// framing that identifies a copy by its sources if they go (nil when not
// recorded).
func (a *applier) stageWatch(op *FileOp, copied, batches bool) (func(int64, []byte), *framing) {
	var watch func(int64, []byte)
	if sw, ok := a.job.(StageWatcher); ok && copied && batches {
		watch = sw.WatchStaged(op)
	}
	// A copy identified by its sources also records its batches' framing,
	// seen as they verify: what identifies it if its sources go.
	if !bySources(op) || !batches {
		return watch, nil
	}
	fr := newFraming()
	inner := watch
	watch = func(pos int64, batch []byte) {
		fr.add(pos, batch)
		if inner != nil {
			inner(pos, batch)
		}
	}
	return watch, fr
}
