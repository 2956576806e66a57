package cmd

import (
	"github.com/kseg/kseg/cmd/check"
	"github.com/kseg/kseg/cmd/replaypsm"
	"github.com/kseg/kseg/segment"
)

// SnapshotCheck is replay-psm's --check-snapshots as kseg check runs it on
// every partition (check.SnapshotCheck): replaypsm builds it from
// replay-psm's own flags, so that check runs exactly what replay-psm
// runs. The tree hands it to check.NewCmd (check imports no other
// command).
func SnapshotCheck(logDirs *segment.LogDirCache) (check.SnapshotCheck, error) {
	sc, err := replaypsm.NewSnapshotCheck(logDirs)
	if err != nil {
		return nil, err
	}
	return sc, nil
}
