package cmd

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/check"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// SnapshotCheck is replay-psm's --check-snapshots as kseg check runs it on
// every partition (check.SnapshotCheck): the options are built by
// replay-psm's own flags, so that check runs exactly what replay-psm
// runs. The tree hands it to check.NewCmd (check imports no other
// command).
func SnapshotCheck(logDirs *segment.LogDirCache) (check.SnapshotCheck, error) {
	o := &replayPSMOptions{}
	c := &cobra.Command{}
	o.AddFlags(c)
	// The engine's walk has checked every CRC: the replay only frames the
	// batches.
	if err := c.Flags().Parse([]string{"--check-snapshots", "--no-verify-crc"}); err != nil {
		return nil, err
	}
	if err := o.Validate(c, []string{"."}); err != nil {
		return nil, err
	}
	o.logDirs = logDirs
	return &snapshotCheck{o: o}, nil
}

type snapshotCheck struct{ o *replayPSMOptions }

// Anomalies replays pd over walk and returns what replay-psm reports of
// it; the warnings replay-psm prints are discarded.
func (c *snapshotCheck) Anomalies(pd *segment.PartitionDir, walk *psm.Walk) ([]finding.Finding, error) {
	s := &ui.Streams{Out: io.Discard, Err: io.Discard, Env: func(string) (string, bool) { return "", false }}
	o := *c.o
	o.psm.Walk = walk
	v, err := replayPartitionDir(s, &o, pd)
	if err != nil {
		return nil, err
	}
	return v.Result.Anomalies, nil
}
