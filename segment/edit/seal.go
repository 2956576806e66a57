// Step 2 of Apply: every file the job touches hashed, its old content
// checked against what the plan saw, its new content's hash taken.

package edit

import (
	"os"
)

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
