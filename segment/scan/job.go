package scan

import (
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// jobBatch is one batch of a job.
type jobBatch struct {
	pos      int64
	b        decode.Batch
	selected bool
	view     BatchView
	crcValid bool
}

// batchJob is a run of consecutive batches of one .log on their way
// through dump: a few hundred KiB, so that handing a job to a worker costs
// little next to the work in it.
type batchJob struct {
	file    string
	batches []jobBatch
	bytes   int64
	wins    []*segment.Window // retained while the job is in flight (parallel)

	// Results, merged in file order by Run.commit.
	out       BatchOut
	crcErrors int64
	selected  int64
	records   int64
	controls  []string // control record types, for the summary
	gaps      OffsetGaps
	errors    int
	warnings  int
	err       error // an operational (not a finding) error: stops the file

	done chan struct{}

	// crcJob: a job of a crcPipeline (crc.go), bounded by crcJobBytes;
	// crcState is its state there, crcReady that every batch's crcValid
	// holds its verdict already (the renderer then does not check again).
	crcJob   bool
	crcState int
	crcReady bool
}

// Bounds of a job.
const (
	jobMaxBytes   = 128 << 10
	jobMaxBatches = 256
)

func (j *batchJob) reset() {
	clear(j.batches) // drop references to the windows' bytes
	j.batches, j.bytes, j.wins, j.err = j.batches[:0], 0, j.wins[:0], nil
	j.out.reset()
	j.crcErrors, j.selected, j.records, j.controls, j.errors, j.warnings = 0, 0, 0, j.controls[:0], 0, 0
	j.gaps.Reset()
	j.crcReady = false
}

// add appends a batch; win is the window its bytes live in (nil on the
// serial path).
func (j *batchJob) add(pos int64, b *decode.Batch, selected bool, win *segment.Window) {
	j.batches = append(j.batches, jobBatch{pos: pos, b: *b, selected: selected})
	j.bytes += int64(len(b.Raw))
	if win != nil && (len(j.wins) == 0 || j.wins[len(j.wins)-1] != win) {
		win.Retain()
		j.wins = append(j.wins, win)
	}
}

// full reports whether the job should go to a worker now.
func (j *batchJob) full() bool {
	if j.crcJob {
		return j.bytes >= crcJobBytes || len(j.batches) >= crcJobBatches
	}
	return j.bytes >= jobMaxBytes || len(j.batches) >= jobMaxBatches
}

// releaseJob drops the windows j retains and resets it for reuse.
func releaseJob(j *batchJob) {
	for _, w := range j.wins {
		w.Release()
	}
	j.reset()
}
