package kafkadumplog_test

import (
	"testing"

	"github.com/kseg/kseg/cmd"
	"github.com/kseg/kseg/cmd/internal/clitest"
)

// TestMain registers the command tree for the package's tests, which run
// it in-process (clitest.Run).
func TestMain(m *testing.M) { clitest.Main(m, cmd.Run) }
