// What a file of an interrupted edit is now: its content before the edit,
// after it, a torn append, or neither (classify), for a rerun and a
// rollback to decide what to do with it.

package edit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// fileState is what a file is, compared with an operation's old and new
// content.
type fileState int

const (
	stateOther fileState = iota // neither
	stateOld                    // the content before the injection (or absent for a create)
	stateNew                    // the content after it (or absent for a delete)
	stateTorn                   // an append interrupted: the old content and part of the new
)

// classify compares the file of op with its old and new hashes.
func classify(dir string, op *FileOp) (fileState, error) {
	path := filepath.Join(dir, op.Name)
	if op.Action == OpAppend {
		return classifyAppend(path, op)
	}
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		switch op.Action {
		case OpCreate:
			return stateOld, nil
		case OpDelete:
			return stateNew, nil
		}
		return stateOther, nil
	}
	if err != nil {
		return stateOther, err
	}
	if st.Size() != op.OldSize && st.Size() != op.NewSize {
		return stateOther, nil
	}
	if bySources(op) {
		// Its bytes are the source ranges, or it is not this edit's; with
		// the sources gone, its batches' framing as the read-back saw it.
		if st.Size() == op.NewSize {
			same, gone := sameAsSources(path, op.Sources)
			if same || (gone && op.NewFraming != "" && framingOf(path) == op.NewFraming) {
				return stateNew, nil
			}
		}
		return stateOther, nil
	}
	sum, _, _, err := hashFile(path, -1, nil, nil)
	if err != nil {
		return stateOther, err
	}
	switch {
	case op.Action != OpCreate && sum == op.OldSHA256:
		return stateOld, nil
	case op.Action != OpDelete && sum == op.NewSHA256:
		return stateNew, nil
	}
	return stateOther, nil
}

// bySources reports a created file whose new content is source ranges
// alone, copied (a mirror's new segment): the staging read-back compares
// every byte with them, and the engine identifies the file by them instead
// of by a hash of the whole copy (NewSHA256 ""), which cost more CPU than
// the copy itself. A journal of an older kseg, with the hash, is still
// read by the hash.
func bySources(op *FileOp) bool {
	return op.Action == OpCreate && op.NewSHA256 == "" && len(op.Content) == 0 && op.KeepPrefix == 0 && len(op.Sources) > 0
}

// sameAsSources reports whether path holds exactly the source ranges,
// one after the other; gone, that a source range could not be read (its
// file deleted or shortened since), so that nothing could be compared.
func sameAsSources(path string, srcs []SourceRange) (same, gone bool) {
	f, err := segment.OpenFile(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	a, b := make([]byte, stageChunk), make([]byte, stageChunk)
	pos := int64(0)
	for _, r := range srcs {
		s, err := segment.OpenFile(r.Path)
		if err != nil {
			return false, errors.Is(err, os.ErrNotExist)
		}
		for done := int64(0); done < r.Len; {
			k := int(min(r.Len-done, stageChunk))
			_, err1 := f.ReadAt(a[:k], pos)
			_, err2 := s.ReadAt(b[:k], r.Pos+done)
			if err2 != nil {
				s.Close()
				return false, errors.Is(err2, io.EOF)
			}
			if err1 != nil || !bytes.Equal(a[:k], b[:k]) {
				s.Close()
				return false, false
			}
			done += int64(k)
			pos += int64(k)
		}
		s.Close()
	}
	var one [1]byte
	n, err := f.ReadAt(one[:], pos)
	return n == 0 && errors.Is(err, io.EOF), false
}

// framing hashes the framing of a .log's batches in order: each batch's
// position, size and stored CRC (a v2 batch's, or a v0/v1 message's).
// Over batches whose CRCs verify, it identifies their bytes as well as
// their CRC-32Cs do, for the cost of hashing 20 bytes a batch.
type framing struct{ h hash.Hash }

func newFraming() *framing { return &framing{h: sha256.New()} }

func (f *framing) add(pos int64, batch []byte) {
	var rec [20]byte
	binary.BigEndian.PutUint64(rec[0:], uint64(pos))
	binary.BigEndian.PutUint64(rec[8:], uint64(len(batch)))
	if len(batch) > v2CRCStart && batch[16] >= 2 {
		copy(rec[16:], batch[17:21])
	} else if len(batch) >= logOverhead+4 {
		copy(rec[16:], batch[12:16])
	}
	f.h.Write(rec[:])
}

func (f *framing) sum() string { return hex.EncodeToString(f.h.Sum(nil)) }

// framingOf is the framing of the .log at path if every one of its
// batches verifies its CRC and the last ends at the end of the file; ""
// otherwise.
func framingOf(path string) string {
	lf, err := segment.OpenLog(path)
	if err != nil {
		return ""
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{})
	defer sc.Close()
	fr := newFraming()
	for sc.Next() {
		b := sc.Batch()
		if !b.CRCValid() {
			return ""
		}
		fr.add(sc.Pos(), b.Raw)
	}
	if sc.Err() != nil || sc.Tail().Kind != segment.TailClean {
		return ""
	}
	return fr.sum()
}
