package cluster_test

import (
	"runtime"
	"testing"

	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/psm/cluster/clustertest"
)

// BenchmarkInternalTopics: the groups view over 200,000 offset commits of
// 20,000 live keys, and the transactions view over 20,000 transactional
// ids (200,000 records), with allocations and bytes allocated per record
// (issue 29's internal-topic dimension; testdata/bench/scale.sh -t
// internal measures 1M and 10M records against keyfloor).
func BenchmarkInternalTopics(b *testing.B) {
	for _, c := range []struct {
		name    string
		records int
		write   func(dir string) error
		load    func(inv *cluster.Inventory) error
	}{
		{"groups", 200_000, func(dir string) error { return clustertest.CommitsLog(dir, 200_000, 20_000) }, func(inv *cluster.Inventory) error {
			_, err := cluster.LoadGroups(inv, cluster.SchemaDecoder{}, cluster.GroupsOptions{Jobs: 1, PSM: psmDefaults()})
			return err
		}},
		{"txns", 200_000, func(dir string) error { return clustertest.TxnLog(dir, 20_000) }, func(inv *cluster.Inventory) error {
			o := cluster.DefaultTxnsOptions()
			o.Jobs = 1
			_, err := cluster.LoadTxns(inv, cluster.SchemaDecoder{}, o)
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := c.write(dir); err != nil {
				b.Fatal(err)
			}
			inv, err := cluster.OpenInventory([]string{dir})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before, mallocs := ms.TotalAlloc, ms.Mallocs
			for b.Loop() {
				if err := c.load(inv); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&ms)
			n := float64(b.N) * float64(c.records)
			b.ReportMetric(float64(ms.TotalAlloc-before)/n, "B/record")
			b.ReportMetric(float64(ms.Mallocs-mallocs)/n, "allocs/record")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/record")
		})
	}
}
