package edit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kseg/kseg/segment"
)

type applier struct {
	job         Job
	kind        *Kind
	dir, logDir string
	// ops is the job's own slice: sealing fills in the job's hashes.
	ops []FileOp
	o   Options
	rep *Report
	j   *Journal
	// jf is the journal opened for appending records, pending the records
	// not yet appended (npending of them); see flushRecords.
	jf       *os.File
	pending  []byte
	npending int
}

func newApplier(job Job, o Options, rep *Report) *applier {
	return &applier{job: job, kind: job.Kind(), dir: job.Dir(), logDir: job.LogDir(), ops: job.Ops(), o: o, rep: rep}
}

func (a *applier) now() time.Time {
	if a.o.Now != nil {
		return a.o.Now()
	}
	return time.Now()
}

// step records a step and gives the fault hook its chance to stop there.
func (a *applier) step(name string) error {
	a.rep.Steps = append(a.rep.Steps, name)
	if a.o.FaultAt != nil {
		if err := a.o.FaultAt(name); err != nil {
			return &FaultError{Step: name, Err: err}
		}
	}
	return nil
}

func (a *applier) path(name string) string { return filepath.Join(a.dir, name) }

// journalPath is the edit's journal: where an interrupted edit's was found
// (an older kseg's name included), else JournalName.
func (a *applier) journalPath() string       { return a.j.Path(a.dir) }
func (a *applier) staged(name string) string { return filepath.Join(a.dir, name+StagedSuffix) }

// lock takes the log directory lock for the duration of the run (see
// takeBrokerLock): a .lock kseg has to create is the log directory's
// owner's, and removed again when the lock is closed.
func (a *applier) lock() (io.Closer, error) {
	if err := a.step("lock"); err != nil {
		return nil, err
	}
	locks := multiCloser{}
	// The log directory's, then that of every other path the partition
	// directory is mounted at (dirAliases): a broker running there must
	// not start while kseg writes either.
	dirs := []string{a.logDir}
	for _, alias := range dirAliases(a.dir) {
		dirs = append(dirs, filepath.Dir(alias))
	}
	for _, ld := range dirs {
		path := filepath.Join(ld, segment.LockName)
		uid, gid := -1, -1
		if fi, err := os.Stat(ld); err == nil {
			uid, gid = fileOwner(fi)
		}
		f, err := takeBrokerLock(path, uid, gid)
		switch {
		case errors.Is(err, errLockHeld):
			err = Refuse(RefuseLocked, path, "another process holds the log directory lock: a broker is running on it; stop it first")
		case errors.Is(err, errFlockHeld):
			err = refuseHeld(path, LockHolder{Kind: LockFlock})
		}
		if err != nil {
			locks.Close()
			return nil, err
		}
		locks = append(locks, f)
	}
	return locks, nil
}

// multiCloser closes each of its closers, last first.
type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var first error
	for i := len(m) - 1; i >= 0; i-- {
		if err := m[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Apply executes a job:
//
//  1. take the log directory's lock (as a broker would), so no broker can
//     start meanwhile;
//  2. hash every file the job changes and check it is as planned;
//  3. write the journal (state prepared) into the partition directory;
//  4. back up every file that changes or goes into the backup directory
//     with a manifest: a copy (O_EXCL, fsynced, verified against the
//     hash). Never a hard link: a broker started after a rollback writes
//     its active segment and indexes in place, and would change a backup
//     that shared their inode;
//  5. write every new file's content to a staged temp file next to it,
//     fsync it while reading it back (checkStaged);
//  6. journal state committing; then rename each staged file over its
//     target or delete the file, fsyncing the directory after each, the
//     journal recording each step;
//  7. remove the journal; read the result back (Job.Check).
//
// A crash before step 6 leaves every Kafka file as it was; from step 6 on
// every file is either its old or its new content, and a rerun (Resume)
// finishes.
func Apply(job Job, o Options) (*Report, error) {
	rep := &Report{Dir: job.Dir(), Kind: job.Kind(), Job: job}
	a := newApplier(job, o, rep)
	return rep, a.run(false)
}

// Resume finishes the interrupted edit whose journal is in dir, an edit of
// kind's tool.
func Resume(dir string, kind *Kind, o Options) (*Report, error) {
	dir = filepath.Clean(dir)
	rep := &Report{Dir: dir, Kind: kind}
	a := &applier{kind: kind, dir: dir, logDir: segment.LogDirOf(dir), o: o, rep: rep}
	return rep, a.run(true)
}

// decode rebuilds the job a journal records, refusing another tool's.
func decode(j *Journal, dir string, kinds ...*Kind) (Job, error) {
	for _, k := range kinds {
		if k.Tool == j.Tool {
			job, err := k.Decode(k, j.Plan, dir, segment.LogDirOf(dir))
			if err != nil {
				return nil, err
			}
			ops := job.Ops()
			if err := checkOps(j.Path(dir), ops); err != nil {
				return nil, err
			}
			// The appended bytes' hashes the journal's records give.
			for i := range ops {
				if h := j.appended[ops[i].Name]; h != "" && ops[i].Action == OpAppend {
					ops[i].NewSHA256 = h
				}
			}
			return job, nil
		}
	}
	return nil, Refuse(RefuseOtherTool, j.Path(dir), "the journal of an interrupted %s: finish it or roll it back with %s", j.Tool, j.Tool)
}

// run takes the lock and applies the work, or finishes the interrupted
// run its journal records.
func (a *applier) run(resume bool) error {
	lk, err := a.lock()
	if err != nil {
		return err
	}
	defer lk.Close()
	defer a.closeJournal()
	if resume {
		return a.resume()
	}
	return a.fresh()
}

func (a *applier) fresh() error {
	// Under the lock, before anything: a journal that appeared since the
	// plan (another kseg run that stopped mid-edit) is that run's, to be
	// finished or rolled back; sealing against it would refuse, and the
	// clean-up of a refusal would then remove the other run's journal and
	// staged files, leaving its half-applied partition with no way out.
	if HasJournal(a.dir) {
		re := Refuse(RefusePending, a.dir, "an interrupted kseg edit left its journal here since this one was planned: finish it or roll it back first")
		re.Remedy = RemedyRollback
		return re
	}
	if a.job.CreatesDir() {
		if err := a.step("mkdir"); err != nil {
			return err
		}
		if err := a.makeDir(); err != nil {
			return err
		}
	}
	if err := a.step("seal"); err != nil {
		return err
	}
	if err := a.start(); err != nil {
		if !isFault(err) {
			// Nothing changed yet: leave no journal, and no partition
			// directory a mirror was about to fill.
			a.abandon()
		}
		return err
	}
	return a.fromPrepared()
}

// start seals the files, checks the backup directory and the free space,
// and writes the journal.
func (a *applier) start() error {
	if err := a.seal(); err != nil {
		return err
	}
	bd, err := a.backupDir()
	if err != nil {
		return err
	}
	_, err = os.Lstat(bd)
	created := errors.Is(err, os.ErrNotExist)
	if err := a.checkSpace(bd); err != nil {
		return err
	}
	if err := a.checkJournalSize(); err != nil {
		return err
	}
	// The temporary file an older kseg's journal was being written
	// through when it stopped: nothing changed then (see CheckLeftovers).
	_ = os.Remove(filepath.Join(a.dir, LegacyJournalName+segment.TempSuffix))
	a.j = &Journal{Version: journalVersion, Tool: a.kind.Tool, State: JournalPrepared,
		Started: a.now().UTC().Format(time.RFC3339Nano), Dir: a.dir, BackupDir: bd, BackupDirCreated: created, Done: []string{}}
	if err := a.saveJournal("journal:" + JournalPrepared); err != nil {
		return err
	}
	// Only now is the backup directory this run's to report (and, on a
	// failure, to clean up).
	a.rep.BackupDir = bd
	return nil
}

// fromPrepared runs backup, staging, commit and finish.
func (a *applier) fromPrepared() error {
	if err := a.prepare(); err != nil {
		if !isFault(err) {
			// Nothing in the partition changed yet: undo the staging and
			// the backup so that a failure (disk full, say) leaves it as it
			// was, with nothing to finish and nothing in the way of a
			// rerun.
			a.cleanup()
		}
		return err
	}
	a.j.State = JournalCommitting
	// Staging filled in the hashes of new contents with source ranges:
	// the committing journal records them, for a rerun to tell old from
	// new.
	if err := a.saveJournal("journal:" + JournalCommitting); err != nil {
		if !isFault(err) {
			a.cleanup()
		}
		return err
	}
	if err := a.commit(nil); err != nil {
		if !isFault(err) {
			return a.undo(err)
		}
		return err
	}
	return a.finish()
}

// seal hashes every file the plan touches: the old content (which must
// still be what the plan saw) and the new one.
func (a *applier) seal() error {
	createMode := newFileMode(a.dir)
	for i := range a.ops {
		op := &a.ops[i]
		path := a.path(op.Name)
		like := path
		if op.Action == OpCreate {
			like = a.dir
		}
		fi, err := os.Lstat(like)
		if err != nil {
			return err
		}
		if like == path && !fi.Mode().IsRegular() {
			return Refuse(RefuseNotRegular, path, "%s, not a regular file: kseg replaces only the regular files Kafka writes", modeName(fi.Mode()))
		}
		// A replaced file keeps its mode, owner and group; a created one
		// takes the partition directory's owner and group (see owner.go).
		op.Perm = uint32(fi.Mode().Perm())
		if op.Action == OpCreate {
			op.Perm = createMode
		}
		op.UID, op.GID = fileOwner(fi)
		if op.Action == OpCreate {
			if _, err := os.Lstat(path); err == nil {
				return Refuse(RefuseChanged, path, "appeared after the plan was made")
			}
			// The hash of copied source ranges is taken from the staged
			// copy (stage), which is read back anyway: reading the
			// sources here too would read every copied byte once more.
			if len(op.Sources) == 0 {
				if op.NewSHA256, err = contentHash(op.Content, nil); err != nil {
					return err
				}
			}
			continue
		}
		if op.Action == OpAppend {
			if err := a.sealAppend(op, fi); err != nil {
				return err
			}
			continue
		}
		keep := int64(-1)
		if op.Action == OpReplace && op.KeepPrefix > 0 {
			keep = op.KeepPrefix
		}
		old, derived, size, err := hashFile(path, keep, op.Content, nil)
		if err != nil {
			return err
		}
		if size != op.OldSize {
			return Refuse(RefuseChanged, path, "%d bytes, the plan saw %d", size, op.OldSize)
		}
		op.OldSHA256 = old
		switch {
		case op.Action == OpDelete:
		case len(op.Sources) > 0:
			// The kept prefix and Content as they are now; the staged
			// copy must start with exactly these bytes.
			if keep >= 0 {
				op.headSHA256 = derived
			} else {
				op.headSHA256, _ = contentHash(op.Content, nil)
			}
		case keep >= 0:
			op.NewSHA256 = derived
		default:
			if op.NewSHA256, err = contentHash(op.Content, op.Sources); err != nil {
				return err
			}
		}
	}
	return nil
}

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
		if op.Action != OpCreate && op.Action != OpAppend {
			names = append(names, op.Name)
		}
	}
	return names
}

// writeAtomic writes path through path.tmp, with what write writes:
// created with O_EXCL, given its mode (and, as root, the owner uid:gid:
// -1 leaves kseg's), fsynced, renamed over path, the directory fsynced. A
// leftover path.tmp is kseg's own (the journal or the manifest), so it is
// replaced.
func (a *applier) writeAtomic(path, step string, uid, gid int, write func(w io.Writer) error) error {
	tmp := path + segment.TempSuffix
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o644)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		if !isFault(err) {
			os.Remove(tmp)
		}
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
	if err := a.step(step + ":tmp"); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
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
	for i := range a.ops {
		op := &a.ops[i]
		if op.Action == OpCreate || op.Action == OpAppend {
			// An append's backup is its size and fingerprint, in the
			// manifest.
			continue
		}
		if err := a.step("backup:" + op.Name); err != nil {
			return err
		}
		if err := a.backup(op); err != nil {
			return err
		}
	}
	for i := range a.ops {
		op := &a.ops[i]
		if op.Action == OpDelete || op.Action == OpAppend {
			continue
		}
		if err := a.step("stage:" + op.Name); err != nil {
			return err
		}
		if err := a.stage(op, a.path(op.Name), op.KeepPrefix, op.Content, op.Sources, op.NewSHA256, "stage:"+op.Name); err != nil {
			return err
		}
	}
	// One fsync of the directory makes every staged file's name durable
	// before the committing journal says they are complete.
	return syncDir(a.dir)
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
	f, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		if !isFault(err) {
			os.Remove(partial)
		}
		return err
	}
	if _, err := copyN(a.writer(partial, f), src, -1, a.o.Progress); err != nil {
		return fail(err)
	}
	if err := a.step("backup:" + op.Name + ":tmp"); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(partial)
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
	if err := os.Remove(staged); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(staged, os.O_WRONLY|os.O_CREATE|os.O_EXCL, os.FileMode(op.Perm))
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		if !isFault(err) {
			os.Remove(staged)
		}
		return err
	}
	// The mode and owner before the first byte: a staged file that a
	// crash leaves, and that a rerun renames into place, is already what
	// the broker's user can open.
	if err := ownAs(f, op.Perm, op.UID, op.GID); err != nil {
		return fail(err)
	}
	w := a.writer(staged, f)
	if keep > 0 {
		s, err := segment.OpenFile(src)
		if err != nil {
			return fail(err)
		}
		// *os.File.ReadFrom with an io.LimitedReader over a file uses
		// copy_file_range on Linux: the kept prefix is copied in the
		// kernel (and shared, on file systems with reflinks).
		n, err := copyN(w, s, keep, a.o.Progress)
		s.Close()
		if err != nil {
			return fail(err)
		}
		if n != keep {
			return fail(fmt.Errorf("%s: %d bytes, need %d", src, n, keep))
		}
	}
	if _, err := w.Write(content); err != nil {
		return fail(err)
	}
	if a.o.Progress != nil && len(content) > 0 {
		a.o.Progress(int64(len(content)))
	}
	for _, r := range srcs {
		if err := copyRangeProgress(w, r, a.o.Progress); err != nil {
			return fail(err)
		}
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
	var watch func(int64, []byte)
	if sw, ok := a.job.(StageWatcher); ok && len(srcs) > 0 && batches {
		watch = sw.WatchStaged(op)
	}
	// A copy identified by its sources also records its batches' framing,
	// seen as they verify: what identifies it if its sources go.
	var fr *framing
	if bySources(op) && batches {
		fr = newFraming()
		inner := watch
		watch = func(pos int64, batch []byte) {
			fr.add(pos, batch)
			if inner != nil {
				inner(pos, batch)
			}
		}
	}
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

// commit renames each staged file over its target, or deletes the file,
// or appends to it, and records each step in the journal (in batches:
// flushRecords says why that is safe). states, for a resumed run, says
// what each file is now (nil: every file is as before): a step the journal
// records as done is skipped only when its file is its new content, so
// that a file put back by hand since is changed again, not trusted to the
// journal.
func (a *applier) commit(states map[string]fileState) error {
	done := make(map[string]bool, len(a.j.Done))
	for _, name := range a.j.Done {
		done[name] = true
	}
	for i := range a.ops {
		op := &a.ops[i]
		st := stateOld
		if states != nil {
			st = states[op.Name]
		}
		if done[op.Name] && st == stateNew {
			continue
		}
		switch {
		case st == stateOther:
			return Refuse(RefuseJournalMismatch, a.path(op.Name), "neither the content before the %s nor after it", a.kind.Noun)
		case op.Action == OpAppend && (st == stateOld || st == stateTorn):
			if err := a.step("commit:" + op.Name); err != nil {
				return err
			}
			if err := a.appendTo(op); err != nil {
				return err
			}
		case st == stateOld:
			if err := a.step("commit:" + op.Name); err != nil {
				return err
			}
			if op.Action == OpDelete {
				if err := os.Remove(a.path(op.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			} else if err := os.Rename(a.staged(op.Name), a.path(op.Name)); err != nil {
				return err
			}
		}
		if !done[op.Name] {
			done[op.Name] = true
			a.j.Done = append(a.j.Done, op.Name)
		}
		if err := a.step("journal:" + op.Name); err != nil {
			return err
		}
		if err := a.recordDone(op); err != nil {
			return err
		}
	}
	return a.flushRecords()
}

// finish reads the edit back (Job.Check, unless Options.SkipVerify),
// records the result in the backup's manifest and removes the journal:
// the edit is complete. A read-back that fails (or cannot be made) keeps
// the journal, so that the edit can still be rolled back; the run
// returns the verdict (or the error).
func (a *applier) finish() error {
	a.closeJournal()
	if !a.o.SkipVerify {
		v, err := a.job.Check()
		if err != nil {
			return fmt.Errorf("verifying the %s (its journal %s is kept: roll it back, or rerun it once the cause is removed): %w", a.kind.Noun, a.journalPath(), err)
		}
		a.rep.Verdict = v
		if !v.OK() {
			a.rep.JournalKept = true
			return nil
		}
	}
	if err := a.recordResult(); err != nil {
		if !isFault(err) {
			// A failure, not a crash (a full disk): the edit is undone
			// like one in the commit, rather than left complete with a
			// backup that cannot say what it left.
			return a.undo(err)
		}
		return err
	}
	if err := a.step("journal:remove"); err != nil {
		return err
	}
	if err := os.Remove(a.journalPath()); err != nil {
		return err
	}
	return syncDir(a.dir)
}

// abandon undoes a prepared (uncommitted) run: staged files and the
// journal go; the backups stay.
func (a *applier) abandon() {
	a.removeStaged()
	_ = os.Remove(a.journalPath() + segment.TempSuffix)
	_ = os.Remove(a.journalPath())
	_ = syncDir(a.dir)
	a.removeCreatedDir()
}

// removeCreatedDir removes the partition directory a mirror created, if
// nothing is left in it.
func (a *applier) removeCreatedDir() {
	if a.job.CreatesDir() && os.Remove(a.dir) == nil {
		_ = syncDir(a.logDir)
	}
}

func (a *applier) removeStaged() {
	for _, op := range a.ops {
		_ = os.Remove(a.staged(op.Name))
	}
}

// resume finishes the injection recorded in the journal.
func (a *applier) resume() error {
	j, err := ReadJournal(a.dir)
	if err != nil {
		return err
	}
	job, err := decode(j, a.dir, a.kind)
	if err != nil {
		return err
	}
	a.job, a.ops, a.j = job, job.Ops(), j
	a.rep.Job = job
	a.rep.Resumed, a.rep.ResumedFrom, a.rep.BackupDir = true, j.State, j.BackupDir
	if err := a.checkBackup(); err != nil {
		return err
	}
	if err := a.step("resume:" + j.State); err != nil {
		return err
	}
	_ = os.Remove(a.journalPath() + segment.TempSuffix)
	switch j.State {
	case JournalPrepared:
		// Nothing was committed: every file must still be as sealed.
		for i := range a.ops {
			op := &a.ops[i]
			st, err := classify(a.dir, op)
			if err != nil {
				return err
			}
			if st != stateOld {
				return Refuse(RefuseJournalMismatch, a.path(op.Name), "changed since the interrupted %s was planned; roll it back and plan again", a.kind.Noun)
			}
		}
		return a.fromPrepared()
	default: // JournalCommitting
		states := map[string]fileState{}
		for i := range a.ops {
			op := &a.ops[i]
			st, err := classify(a.dir, op)
			if err != nil {
				return err
			}
			states[op.Name] = st
			switch {
			case st == stateOther:
				return Refuse(RefuseJournalMismatch, a.path(op.Name), "neither the content before the %s nor after it", a.kind.Noun)
			case st == stateOld && op.Action != OpDelete && op.Action != OpAppend:
				if err := a.ensureStaged(op); err != nil {
					return err
				}
			}
		}
		// The header again, with the steps recorded so far: the records
		// this run appends then follow a whole line (a crash may have cut
		// the last one short), in a file that is this journal's alone
		// (never appended to through a second hard link).
		if err := a.saveJournal("journal:" + JournalCommitting); err != nil {
			return err
		}
		if err := a.commit(states); err != nil {
			if !isFault(err) {
				return a.undo(err)
			}
			return err
		}
		return a.finish()
	}
}

// ensureStaged checks a staged file of a committing run, restaging it from
// the (unchanged) target or the backup if it is missing or wrong.
func (a *applier) ensureStaged(op *FileOp) error {
	if bySources(op) {
		if same, _ := sameAsSources(a.staged(op.Name), op.Sources); same {
			return nil
		}
	} else if sum, _, _, err := hashFile(a.staged(op.Name), -1, nil, nil); err == nil && sum == op.NewSHA256 {
		return nil
	}
	src := a.path(op.Name)
	if op.Action == OpCreate {
		src = ""
	}
	if err := a.stage(op, src, op.KeepPrefix, op.Content, op.Sources, op.NewSHA256, "restage:"+op.Name); err != nil {
		return err
	}
	return syncDir(a.dir)
}

// Rollback undoes the interrupted edit whose journal is in dir: every file
// changed or deleted is copied back from the backup, every file created is
// removed, then the staged files and the journal. A completed edit has no
// journal; restore it from its backup by hand (the manifest says how).
// kinds are the tools whose journals the caller undoes; another tool's
// journal is refused (RefuseOtherTool), so that a rollback never says it
// undid a repair when it undid a mirror.
func Rollback(dir string, o Options, kinds ...*Kind) (*Report, error) {
	dir = RealPath(dir)
	rep := &Report{Dir: dir, RolledBack: true, Resumed: true}
	// The journal is checked before the lock, so that a refusal changes
	// nothing at all (taking the lock may create .lock, and removing it
	// again still touches the log directory); then again under the lock:
	// a journal read without it may be finished by another kseg run
	// meanwhile, and restoring the backup then would undo an edit that
	// completed and verified.
	if _, _, err := readForRollback(dir, o, rep, kinds); err != nil {
		return nil, err
	}
	pre := &applier{dir: dir, logDir: segment.LogDirOf(dir), o: o, rep: rep}
	lk, err := pre.lock()
	if err != nil {
		return rep, err
	}
	defer lk.Close()
	a, j, err := readForRollback(dir, o, rep, kinds)
	if err != nil {
		return nil, err
	}
	rep.Kind, rep.Job, rep.ResumedFrom, rep.BackupDir = a.job.Kind(), a.job, j.State, j.BackupDir
	if err := a.restore(); err != nil {
		return rep, err
	}
	a.removeStaged()
	if err := a.step("journal:remove"); err != nil {
		return rep, err
	}
	_ = os.Remove(j.Path(dir) + segment.TempSuffix)
	if err := os.Remove(j.Path(dir)); err != nil {
		return rep, err
	}
	if err := syncDir(dir); err != nil {
		return rep, err
	}
	a.removeCreatedDir()
	return rep, nil
}

// readForRollback reads dir's journal for a rollback by one of kinds,
// with every check made before anything is touched.
func readForRollback(dir string, o Options, rep *Report, kinds []*Kind) (*applier, *Journal, error) {
	j, err := ReadJournal(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: no interrupted operation to roll back (no %s)", dir, JournalName)
		}
		return nil, nil, err
	}
	job, err := decode(j, dir, kinds...)
	if err != nil {
		return nil, nil, err
	}
	a := newApplier(job, o, rep)
	a.j = j
	if err := a.checkBackup(); err != nil {
		return nil, nil, err
	}
	return a, j, nil
}

// restore puts every file of the partition back as it was before the edit,
// last operation first: a changed or deleted file from its backup, a
// created file removed, an append truncated. Every file is checked first
// (classify, and that its backup is there): when one is neither its
// content before the edit nor after it, or its backup is missing, nothing
// is restored and the refusal names every such file, so that a refusal
// changes nothing.
func (a *applier) restore() error {
	states := make([]fileState, len(a.ops))
	var bad []string
	for i := range a.ops {
		op := &a.ops[i]
		st, err := classify(a.dir, op)
		if err != nil {
			return err
		}
		states[i] = st
		if st == stateOther {
			bad = append(bad, op.Name)
			continue
		}
		if st != stateOld && (op.Action == OpReplace || op.Action == OpDelete) {
			if fi, err := os.Lstat(filepath.Join(a.j.BackupDir, op.Name)); err != nil || !fi.Mode().IsRegular() || fi.Size() != op.OldSize {
				return Refuse(RefuseBackupDir, filepath.Join(a.j.BackupDir, op.Name), "the backup of %s is missing or not %d bytes; nothing was restored", op.Name, op.OldSize)
			}
		}
	}
	if len(bad) > 0 {
		return Refuse(RefuseJournalMismatch, a.path(bad[0]), "%s neither the content before the %s nor after it; nothing was restored: put %s back from %s by hand (or as it was after the %s), then roll back again",
			namesAre(bad), a.kind.Noun, pronoun(bad), a.j.BackupDir, a.kind.Noun)
	}
	for i := len(a.ops) - 1; i >= 0; i-- {
		op := &a.ops[i]
		if states[i] == stateOld {
			continue
		}
		if err := a.step("rollback:" + op.Name); err != nil {
			return err
		}
		if err := a.restoreOne(op); err != nil {
			return err
		}
		if err := syncDir(a.dir); err != nil {
			return err
		}
	}
	return nil
}

// restoreOne puts op's file back as it was before the edit.
func (a *applier) restoreOne(op *FileOp) error {
	switch op.Action {
	case OpCreate:
		if err := os.Remove(a.path(op.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	case OpAppend:
		// The first OldSize bytes were never written: truncating gives
		// them back (the fingerprint was checked by classify).
		if err := a.truncateBack(op); err != nil {
			return fmt.Errorf("truncating %s back to %d bytes: %w", op.Name, op.OldSize, err)
		}
	default:
		bk := filepath.Join(a.j.BackupDir, op.Name)
		if err := a.stage(op, bk, op.OldSize, nil, nil, op.OldSHA256, "rollback:"+op.Name); err != nil {
			return fmt.Errorf("restoring %s from %s: %w", op.Name, bk, err)
		}
		if err := os.Rename(a.staged(op.Name), a.path(op.Name)); err != nil {
			return err
		}
	}
	return nil
}

// namesAre is "NAME is" or "NAME1, NAME2 are".
func namesAre(names []string) string {
	if len(names) == 1 {
		return names[0] + " is"
	}
	return strings.Join(names, ", ") + " are"
}

func pronoun(names []string) string {
	if len(names) == 1 {
		return "it"
	}
	return "them"
}
