package cluster

import (
	"runtime"

	"github.com/kseg/kseg/segment"
)

// ReplayGroupsRetained replays one __consumer_offsets partition directory
// as LoadGroups does and reports, at the end of the replay and with the
// replay still alive, how many groups it holds and how many bytes of heap
// it retains (HeapAlloc after a collection, against before it started).
func ReplayGroupsRetained(dir string, dec Decoder) (groups int, retained int64, err error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := newGroupsReplay(dec, dir)
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return 0, 0, err
	}
	if _, _, err := scanPartition(pd, scanHandler{record: r.apply, marker: r.marker}); err != nil {
		return 0, 0, err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	groups = len(r.groups)
	runtime.KeepAlive(r)
	return groups, int64(after.HeapAlloc) - int64(before.HeapAlloc), nil
}
