package psm

import (
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Source is where a replay reads a partition when its bytes are not the
// files of the directory it lists (Options.Source): a digest of the
// partition (kseg digest) holds every batch header, and the bytes of its
// control batches, of the batches that fail their CRC and of its producer
// snapshots, which is everything a replay reads. The directory handed to
// Rebuild then lists the segments and snapshots the source holds, under
// their names.
type Source interface {
	// ScanSegment scans the .log of seg from its first batch.
	ScanSegment(seg segment.SegmentFiles) (SegmentScanner, error)
	// ReadSnapshot reads the producer snapshot s, as
	// segment.ReadProducerSnapshot reads its file.
	ReadSnapshot(s segment.SnapshotFile) ([]segment.SnapshotEntry, error)
}

// SegmentScanner is a scan of one segment's batches in file order, with
// each batch's CRC verdict and how the scan ended: what a replay uses of a
// segment.CRCScanner.
type SegmentScanner interface {
	Next() bool
	Batch() *decode.Batch
	Pos() int64
	CRCValid() bool
	Tail() segment.Tail
	Err() error
	Close()
}

var _ SegmentScanner = (*segment.CRCScanner)(nil)
