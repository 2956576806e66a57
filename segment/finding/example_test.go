package finding_test

import (
	"fmt"

	"github.com/kseg/kseg/segment/finding"
)

// A finding takes its severity from its kind: the registry gives each kind
// one, so every command that reports a torn tail calls it an error.
func Example() {
	f := finding.Newf(finding.TornTail, "%s: the last batch is cut short", "00000000000000000000.log")
	f.File, f.Position = "00000000000000000000.log", 535
	fmt.Println(f.Severity().Upper(), f.Kind, f.Message)

	k, _ := finding.Lookup("open-transaction")
	fmt.Println(k, k.Severity(), finding.HangingTransaction, finding.HangingTransaction.Severity())
	// Output:
	// ERROR torn-tail 00000000000000000000.log: the last batch is cut short
	// open-transaction warning hanging-transaction error
}
