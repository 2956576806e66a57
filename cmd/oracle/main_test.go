package oracle

import (
	"testing"

	"github.com/kseg/kseg/cmd"
	"github.com/kseg/kseg/cmd/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, cmd.Run) }
