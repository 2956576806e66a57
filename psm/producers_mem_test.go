package psm

import (
	"cmp"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// manyProducers writes a partition of n producers, one batch each
// (segtest.Producers), with producer snapshots at a roll and at the end.
func manyProducers(tb testing.TB, n int) *segment.PartitionDir {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "many-0")
	if err := segtest.Producers(dir, n, segtest.ProducersOptions{TransactionalEvery: 100, SegmentBytes: int64(n) * 50}); err != nil {
		tb.Fatal(err)
	}
	pd := segtest.OpenDir(tb, dir)
	if len(pd.Snapshots) < 2 {
		tb.Fatalf("%d snapshots, want one at a roll and one at the end", len(pd.Snapshots))
	}
	return pd
}

// allocated is the heap bytes fn allocates, and the bytes still in use
// after it while what it returned is held.
func allocated(fn func() any) (total, retained uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := fn()
	runtime.ReadMemStats(&after)
	total = after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc > before.HeapAlloc {
		retained = after.HeapAlloc - before.HeapAlloc
	}
	return total, retained
}

// TestProducerStateMemory: a rebuild's memory is the size of the state
// (issue 29: a million producers cost 556 MiB in replay-psm, 1.2 GiB with
// --check-snapshots). Per producer, a rebuild from the latest snapshot
// allocates no copy of the snapshot beside the file (it loads entry by
// entry), no five-slot batch array for a producer of one batch, and no
// deep copy of the final state; --check-snapshots compares each file
// with the state at its offset as the replay passes it, without a copy
// of the state or maps of either side. Allocation counts, not timings:
// they do not move with the machine's load.
func TestProducerStateMemory(t *testing.T) {
	const n = 20_000
	pd := manyProducers(t, n)
	opts := DefaultOptions()
	for _, c := range []struct {
		name                string
		maxTotal, maxRetain float64 // bytes per producer
		run                 func() any
	}{
		// Before this change: 639 bytes allocated, 96 retained (the
		// state's batch metadata copied); 311 and 80 after. Constant
		// buffers (the log's scanner, the snapshot reader's) count here
		// too: this is 20,000 producers.
		{"from the latest snapshot", 400, 88, func() any {
			r, err := Rebuild(pd, opts)
			if err != nil || len(r.Producers) != n {
				t.Fatalf("%v, %d producers", err, len(r.Producers))
			}
			return r
		}},
		// Before: 475 and 96; after: 299 and 80.
		{"from the log start", 400, 88, func() any {
			o := opts
			o.FromSnapshot = SnapshotNone
			r, err := Rebuild(pd, o)
			if err != nil || len(r.Producers) != n {
				t.Fatalf("%v, %d producers", err, len(r.Producers))
			}
			return r
		}},
		// Before: 1,167 and 96; after: 365 and 80.
		{"--check-snapshots", 500, 88, func() any {
			checks, r, err := CheckSnapshots(pd, opts)
			if err != nil || len(r.Producers) != n {
				t.Fatalf("%v, %d producers", err, len(r.Producers))
			}
			for _, c := range checks {
				if !c.Match() || c.Rebuilt != c.OnDisk || c.Rebuilt == 0 {
					t.Fatalf("%s: %+v", c.Path, c)
				}
			}
			return r
		}},
	} {
		total, retained := allocated(c.run)
		perTotal, perRetained := float64(total)/n, float64(retained)/n
		t.Logf("%s: %.0f bytes allocated, %.0f retained per producer", c.name, perTotal, perRetained)
		if perTotal > c.maxTotal || perRetained > c.maxRetain {
			t.Errorf("%s: %.0f bytes allocated and %.0f retained per producer, want at most %.0f and %.0f",
				c.name, perTotal, perRetained, c.maxTotal, c.maxRetain)
		}
	}
}

// referenceCompare is CompareSnapshot as maps would do it: the
// definition the sorted merge must agree with.
func referenceCompare(rebuilt, onDisk []segment.SnapshotEntry) []Difference {
	disk := map[int64]segment.SnapshotEntry{}
	count := map[int64]int64{}
	for _, e := range onDisk {
		disk[e.ProducerID] = e
		count[e.ProducerID]++
	}
	var out []Difference
	seen := map[int64]bool{}
	for _, r := range rebuilt {
		seen[r.ProducerID] = true
		d, ok := disk[r.ProducerID]
		if !ok {
			out = append(out, Difference{ProducerID: r.ProducerID, Field: FieldEntry, Rebuilt: 1})
			continue
		}
		if count[r.ProducerID] > 1 {
			out = append(out, Difference{ProducerID: r.ProducerID, Field: FieldDuplicate, Rebuilt: 1, OnDisk: count[r.ProducerID]})
		}
		for _, f := range []struct {
			name string
			a, b int64
		}{{FieldProducerEpoch, int64(r.ProducerEpoch), int64(d.ProducerEpoch)}, {FieldLastSequence, int64(r.LastSequence), int64(d.LastSequence)},
			{FieldLastOffset, r.LastOffset, d.LastOffset}, {FieldOffsetDelta, int64(r.OffsetDelta), int64(d.OffsetDelta)},
			{FieldTimestamp, r.Timestamp, d.Timestamp}, {FieldCoordinatorEpoch, int64(r.CoordinatorEpoch), int64(d.CoordinatorEpoch)},
			{FieldCurrentTxnFirstOffset, normTxn(r.CurrentTxnFirstOffset), normTxn(d.CurrentTxnFirstOffset)}} {
			if f.a != f.b {
				out = append(out, Difference{ProducerID: r.ProducerID, Field: f.name, Rebuilt: f.a, OnDisk: f.b})
			}
		}
	}
	for pid := range disk {
		if !seen[pid] {
			out = append(out, Difference{ProducerID: pid, Field: FieldEntry, OnDisk: 1})
		}
	}
	order := map[string]int{FieldEntry: 0, FieldDuplicate: 1, FieldProducerEpoch: 2, FieldLastSequence: 3, FieldLastOffset: 4,
		FieldOffsetDelta: 5, FieldTimestamp: 6, FieldCoordinatorEpoch: 7, FieldCurrentTxnFirstOffset: 8}
	slices.SortFunc(out, func(a, b Difference) int {
		return cmp.Or(cmp.Compare(a.ProducerID, b.ProducerID), cmp.Compare(order[a.Field], order[b.Field]))
	})
	return out
}

// TestCompareSnapshotAgreesWithMaps: the sorted merge finds exactly the
// differences a comparison through maps finds, on random states with
// producers on one side only, changed fields, files listing a producer
// two or three times (the last counts), in any order, and the same through
// holdsExactly and explainedByBroker's lookups.
func TestCompareSnapshotAgreesWithMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	entry := func(pid int64) segment.SnapshotEntry {
		return segment.SnapshotEntry{ProducerID: pid, ProducerEpoch: int16(rng.IntN(2)), LastSequence: int32(rng.IntN(3)), LastOffset: int64(rng.IntN(3)) - 1,
			OffsetDelta: int32(rng.IntN(2)), Timestamp: int64(rng.IntN(2)), CoordinatorEpoch: int32(rng.IntN(2)) - 1, CurrentTxnFirstOffset: int64(rng.IntN(3)) - 2}
	}
	for round := range 2000 {
		var rebuilt, onDisk []segment.SnapshotEntry
		for pid := int64(0); pid < int64(rng.IntN(12)); pid++ {
			if rng.IntN(5) > 0 {
				rebuilt = append(rebuilt, entry(pid))
			}
			switch k := rng.IntN(10); {
			case k == 0:
			case k < 6 && len(rebuilt) > 0 && rebuilt[len(rebuilt)-1].ProducerID == pid:
				onDisk = append(onDisk, rebuilt[len(rebuilt)-1])
			default:
				for range 1 + rng.IntN(2)*rng.IntN(3) {
					onDisk = append(onDisk, entry(pid))
				}
			}
		}
		rng.Shuffle(len(onDisk), func(i, j int) { onDisk[i], onDisk[j] = onDisk[j], onDisk[i] })
		if round%2 == 0 {
			rng.Shuffle(len(rebuilt), func(i, j int) { rebuilt[i], rebuilt[j] = rebuilt[j], rebuilt[i] })
		}
		got, want := CompareSnapshot(rebuilt, onDisk), referenceCompare(rebuilt, onDisk)
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("round %d:\nrebuilt %+v\nonDisk  %+v\ngot  %v\nwant %v", round, rebuilt, onDisk, got, want)
		}
		// explainedByBroker with rebuilt as every alternative: the file
		// is explained exactly when nothing differs.
		if _, ok := explainedByBroker(rebuilt, rebuilt, rebuilt, onDisk, -1); ok != (len(want) == 0) {
			t.Fatalf("round %d: explainedByBroker %v with %d differences", round, ok, len(want))
		}
		for _, e := range onDisk {
			x := newPIDIndex(onDisk)
			got, ok := x.find(e.ProducerID)
			var last segment.SnapshotEntry
			for _, f := range onDisk {
				if f.ProducerID == e.ProducerID {
					last = f
				}
			}
			if !ok || got != last {
				t.Fatalf("round %d: find(%d) = %+v, %v; want the last, %+v", round, e.ProducerID, got, ok, last)
			}
		}
	}
}

// BenchmarkReplayProducers: a rebuild, and --check-snapshots, of a
// partition of 20,000 producers (issue 29's producers dimension; run.sh
// -t producers measures a million), with bytes allocated per producer.
func BenchmarkReplayProducers(b *testing.B) {
	const n = 20_000
	pd := manyProducers(b, n)
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"latest", func() error { _, err := Rebuild(pd, DefaultOptions()); return err }},
		{"none", func() error {
			o := DefaultOptions()
			o.FromSnapshot = SnapshotNone
			_, err := Rebuild(pd, o)
			return err
		}},
		{"check-snapshots", func() error { _, _, err := CheckSnapshots(pd, DefaultOptions()); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.TotalAlloc-before)/float64(b.N)/n, "B/producer")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/producer")
		})
	}
}
