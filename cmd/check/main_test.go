package check_test

import (
	"testing"

	"github.com/kseg/kseg/cmd"
	"github.com/kseg/kseg/cmd/check"
	"github.com/kseg/kseg/cmd/internal/clitest"
)

// TestMain registers the command tree for the package's tests, which run
// it in-process (clitest.Run), and the producer-state check the tree
// hands to check for the tests that build check's engine themselves.
func TestMain(m *testing.M) {
	*check.TestSnapshots = cmd.SnapshotCheck
	clitest.Main(m, cmd.Run)
}
