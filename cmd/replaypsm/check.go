package replaypsm

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// SnapshotCheck replays partitions as `kseg replay-psm --check-snapshots
// --no-verify-crc` does, for kseg check: the options are built by the
// command's own flags, so that check runs exactly what replay-psm runs.
type SnapshotCheck struct {
	o *replayPSMOptions
}

// NewSnapshotCheck is replay-psm's --check-snapshots for kseg check, the
// log directories' checkpoints read once through logDirs. dump has checked
// every CRC by then: the replay only frames the batches.
func NewSnapshotCheck(logDirs *segment.LogDirCache) (*SnapshotCheck, error) {
	o := &replayPSMOptions{}
	c := &cobra.Command{}
	o.AddFlags(c)
	if err := c.Flags().Parse([]string{"--check-snapshots", "--no-verify-crc"}); err != nil {
		return nil, err
	}
	if err := o.Validate(c, []string{"."}); err != nil {
		return nil, err
	}
	o.logDirs = logDirs
	return &SnapshotCheck{o: o}, nil
}

// Anomalies replays the partition pd over walk (the CRC walk check has
// done) and returns what replay-psm reports of it. The warnings
// replay-psm prints (a log directory checkpoint that does not parse) are
// kseg check's checkpoints findings, so they are discarded here.
func (c *SnapshotCheck) Anomalies(pd *segment.PartitionDir, walk *psm.Walk) ([]finding.Finding, error) {
	s := &ui.Streams{Out: io.Discard, Err: io.Discard, Env: func(string) (string, bool) { return "", false }}
	o := *c.o
	o.psm.Walk = walk
	v, err := replayPartitionDir(s, &o, pd)
	if err != nil {
		return nil, err
	}
	return v.Result.Anomalies, nil
}
