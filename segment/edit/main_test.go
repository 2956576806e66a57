package edit_test

import (
	"os"
	"testing"

	"github.com/kseg/kseg/segment/segtest"
)

// TestMain runs 8 parallel subtests at once: the crash and ENOSPC loops
// wait on fsync far more than they compute (segtest.DefaultParallel).
func TestMain(m *testing.M) {
	segtest.DefaultParallel(8)
	os.Exit(m.Run())
}
