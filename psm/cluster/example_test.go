package cluster_test

import (
	"fmt"

	"github.com/kseg/kseg/psm/cluster"
)

// Find the hanging transactions of a broker's disk offline, as
// kafka-transactions.sh find-hanging does online: testdata/logdirs/broker-1
// holds __transaction_state-0 and the data partitions, and producer 4000's
// transaction in payments-0 was aborted by its coordinator without a
// marker reaching the partition.
func ExampleLoadTxns() {
	inv, err := cluster.OpenInventory([]string{"../../testdata/logdirs/broker-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := cluster.LoadTxns(inv, cluster.SchemaDecoder{}, cluster.DefaultTxnsOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range v.Open {
		fmt.Printf("%s-%d producer %d from offset %d: %s (%s)\n", t.Topic, t.Partition, t.ProducerID, t.FirstOffset, t.Verdict, t.TransactionalID)
	}
	for _, f := range v.Findings {
		fmt.Println(f.Severity(), f.Kind, f.Subject)
	}
	// Output:
	// payments-0 producer 4000 from offset 0: hanging (pay-1)
	// error hanging-transaction payments-0
}
