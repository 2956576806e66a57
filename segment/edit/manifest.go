package edit

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// manifest is the backup directory's description of itself, enough to
// restore by hand, and, once the edit completed, to undo it (Restore).
type manifest struct {
	Version      int            `json:"version"`
	Tool         string         `json:"tool"`
	Created      string         `json:"created"`
	PartitionDir string         `json:"partitionDir"`
	Details      any            `json:"details,omitempty"`
	Files        []manifestFile `json:"files"`
	// CreatedDirs are the directories the edit created (a mirror's new
	// partition directory): a manual restore removes them, once empty,
	// after deleting the files listed with size -1.
	CreatedDirs []string `json:"createdDirs,omitempty"`
	// Completed is when the edit completed and read back clean; every
	// file then records what the edit left (After). "" for an edit that
	// has not completed (or a backup an older kseg wrote).
	Completed string `json:"completed,omitempty"`
	Restore   string `json:"restore"`
}

type manifestFile struct {
	Name   string `json:"name"`
	Action Action `json:"action"`
	Size   int64  `json:"size"`             // size before (-1: created by the edit)
	SHA256 string `json:"sha256,omitempty"` // content before; an append's: of its last fingerprintBytes bytes
	// FingerprintBytes, for an append, is how many bytes before Size
	// SHA256 covers; the backup holds no copy of the file, whose first
	// Size bytes the append never writes: restoring it is truncating it
	// to Size.
	FingerprintBytes int64 `json:"fingerprintBytes,omitempty"`
	// Mode, UID and GID are the file's before (for a created file: what
	// it was created with); UID and GID -1 when unknown.
	Mode uint32 `json:"mode,omitempty"`
	UID  *int   `json:"uid,omitempty"`
	GID  *int   `json:"gid,omitempty"`
	// After is what the completed edit left (nil until it completed).
	After *manifestAfter `json:"after,omitempty"`
}

// manifestAfter is a file as a completed edit left it: its size (-1:
// deleted) and the SHA-256 of its content (an append's: of the bytes it
// appended), or, for a copy a mirror did not hash, the framing of its
// batches (framingOf).
type manifestAfter struct {
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256,omitempty"`
	Framing string `json:"framing,omitempty"`
}

// maxManifestBytes bounds the manifest Restore reads: it names each file
// once, with two hashes.
const maxManifestBytes = 64 << 20

// manifestOf is the manifest of the edit a runs; with done, of the
// completed edit.
func (a *applier) manifestOf(done bool) manifest {
	m := manifest{Version: 1, Tool: a.kind.Tool, Created: a.j.Started, PartitionDir: a.dir, Details: a.job.ManifestDetails(),
		Restore: fmt.Sprintf("With the broker stopped: copy every file listed with a size back into the partition directory, "+
			"truncate every file listed with action append to its size (truncate -s SIZE: the %s only wrote after those bytes), "+
			"delete every file listed with size -1 (created by the %s), then remove every directory listed in createdDirs. "+
			"`%s --rollback` does this for an interrupted run; `kseg restore %s` for a completed one (it refuses when the partition changed since).",
			a.kind.Noun, a.kind.Noun, a.kind.Tool, a.j.BackupDir)}
	if a.job.CreatesDir() {
		m.CreatedDirs = []string{a.dir}
	}
	if done {
		m.Completed = a.now().UTC().Format(time.RFC3339Nano)
	}
	for _, op := range a.ops {
		uid, gid := op.UID, op.GID
		mf := manifestFile{Name: op.Name, Action: op.Action, Size: op.OldSize, SHA256: op.OldSHA256, Mode: op.Perm, UID: &uid, GID: &gid}
		if op.Action == OpAppend {
			mf.FingerprintBytes = min(op.OldSize, FingerprintBytes)
		}
		if done {
			mf.After = &manifestAfter{Size: op.NewSize, SHA256: op.NewSHA256, Framing: op.NewFraming}
			if op.Action == OpDelete {
				mf.After = &manifestAfter{Size: -1}
			}
		}
		m.Files = append(m.Files, mf)
	}
	return m
}

// writeManifest writes the backup's manifest (step "backup-manifest", or
// "backup-manifest:done" once the edit completed).
func (a *applier) writeManifest(done bool) error {
	b, err := json.MarshalIndent(a.manifestOf(done), "", "  ")
	if err != nil {
		return err
	}
	step := "backup-manifest"
	if done {
		step += ":done"
		if err := a.step(step); err != nil {
			return err
		}
	}
	return a.writeAtomic(filepath.Join(a.j.BackupDir, BackupManifestName), step, -1, -1, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// recordResult records in the backup's manifest what the completed edit
// left, before its journal goes: from then on `kseg restore` can undo it,
// and tell whether the partition changed since.
func (a *applier) recordResult() error {
	if a.j.BackupDir == "" {
		return nil
	}
	return a.writeManifest(true)
}
