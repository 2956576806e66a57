package digest

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"
)

// FormatVersion is the version of the digest format this package writes
// and the highest it reads.
const FormatVersion = 1

const (
	headerPrefix  = "kseg-digest "
	maxHeaderLine = 256
	trailerMagic  = "kdigest\n"
	trailerSize   = 32
	// blockTarget is the payload size at which a block is closed.
	blockTarget = 64 << 10
	// producerSlots is the size of the producer table (per segment).
	producerSlots = 128
	// maxString bounds a string field (topic, paths, messages).
	maxString = 64 << 10
)

// Record tags.
const (
	tagPartition = 'P'
	tagSegment   = 'S'
	tagTail      = 'T'
	tagLegacy    = 'L'
	tagSnapshot  = 'N'
	tagFacts     = 'F'
	tagBatch     = 0x80
)

// Batch record flags (the low seven bits of its tag).
const (
	fProducerMask = 0x03
	fAttributes   = 0x04
	fBody         = 0x08
	fComputedCRC  = 0x10
	fBaseOffset   = 0x20
	fExt          = 0x40
	// extension byte
	xEpoch   = 0x01
	xRecords = 0x04
)

// Producer modes (flags & fProducerMask).
const (
	producerNone = iota
	producerSlot
	producerSlotExplicit
	producerNew
)

// Partition record flags.
const (
	pCleanShutdown = 0x01
	pLive          = 0x02
)

// Legacy entry flags.
const (
	lBody        = 0x01
	lComputedCRC = 0x02
	lOffset      = 0x04
)

// Hash is the hash of a batch's CRC-covered bytes.
type Hash uint8

// Hashes.
const (
	// XXH3 is xxh3-128 (github.com/zeebo/xxh3), 16 bytes: the default.
	XXH3 Hash = 1
	// SHA256 is SHA-256 (crypto/sha256), 32 bytes.
	SHA256 Hash = 2
)

// String is the hash's name as the header and the --hash flag spell it.
func (h Hash) String() string {
	switch h {
	case XXH3:
		return "xxh3-128"
	case SHA256:
		return "sha256"
	}
	return fmt.Sprintf("Hash(%d)", uint8(h))
}

// Size is the hash's length in bytes.
func (h Hash) Size() int {
	switch h {
	case XXH3:
		return 16
	case SHA256:
		return 32
	}
	return 0
}

// Sum appends the hash of p to dst.
func (h Hash) Sum(dst, p []byte) []byte {
	switch h {
	case XXH3:
		v := xxh3.Hash128(p).Bytes()
		return append(dst, v[:]...)
	case SHA256:
		v := sha256.Sum256(p)
		return append(dst, v[:]...)
	}
	panic(fmt.Sprintf("digest: no hash %d", uint8(h)))
}

// ParseHash reads a hash's name.
func ParseHash(s string) (Hash, error) {
	switch s {
	case "xxh3-128", "xxh3":
		return XXH3, nil
	case "sha256", "sha-256":
		return SHA256, nil
	}
	return 0, fmt.Errorf("unknown hash %q (want xxh3-128 or sha256)", s)
}

// Error classes of a FormatError.
var (
	// ErrNotDigest: the file does not start with a digest header.
	ErrNotDigest = errors.New("not a kseg digest")
	// ErrVersion: a format version this kseg does not read.
	ErrVersion = errors.New("unsupported digest format version")
	// ErrTruncated: the digest ends inside a structure.
	ErrTruncated = errors.New("truncated digest")
	// ErrCorrupt: bytes that cannot be what kseg wrote (a block whose
	// checksum fails, a field out of range, an unknown record).
	ErrCorrupt = errors.New("corrupt digest")
	// ErrContinuation: a section that does not continue the sections
	// before it (another partition, a gap, a log that changed below it).
	ErrContinuation = errors.New("digest section does not continue the one before it")
)

// FormatError is a digest that cannot be read: where (the byte position
// in the file), what was expected there, and what was found.
type FormatError struct {
	Path     string
	Pos      int64
	Expected string
	Found    string
	Err      error // one of the classes above
}

func (e *FormatError) Error() string {
	msg := ""
	if e.Path != "" {
		msg = e.Path + ": "
	}
	msg += fmt.Sprintf("byte %d: %v: expected %s", e.Pos, e.Err, e.Expected)
	if e.Found != "" {
		msg += ", found " + e.Found
	}
	return msg
}

func (e *FormatError) Unwrap() error { return e.Err }
