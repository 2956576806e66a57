package dump

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// TestVerifyIndexOnePassSameFindings: a directory dump checks a segment's
// .index and .timeindex in one walk over the log, reporting the time
// index's problems at its own turn (dumpState.verified). They must be the
// findings a dump that checks each file in its own walk reports: here the
// .timeindex is named before the .index, so nothing is stashed.
func TestVerifyIndexOnePassSameFindings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	clitest.Fixture(t, "partitions/orders-0", dir)
	seg := filepath.Join(dir, "00000000000000000026")
	// Entry 1 of the .index points one byte into a batch; entry 0 of the
	// .timeindex gets another timestamp.
	idx, err := os.ReadFile(seg + ".index")
	if err != nil || len(idx) < 16 {
		t.Fatalf("%s.index: %d bytes, %v", seg, len(idx), err)
	}
	binary.BigEndian.PutUint32(idx[12:], binary.BigEndian.Uint32(idx[12:])+1)
	tidx, err := os.ReadFile(seg + ".timeindex")
	if err != nil || len(tidx) < 12 {
		t.Fatalf("%s.timeindex: %d bytes, %v", seg, len(tidx), err)
	}
	binary.BigEndian.PutUint64(tidx[0:], binary.BigEndian.Uint64(tidx[0:])-1)
	for name, b := range map[string][]byte{".index": idx, ".timeindex": tidx} {
		testkit.WriteFile(t, seg+name, b)
	}
	findings := func(args ...string) map[string][]string {
		r := clitest.Run(append([]string{"dump", "--output", "json", "--verify-index"}, args...)...)
		if r.Code != ui.ExitFindings {
			t.Fatalf("kseg %v: exit %d, want %d\n%s", r.Args, r.Code, ui.ExitFindings, r.Stderr)
		}
		by := map[string][]string{}
		for _, m := range clitest.CheckJSONLines(t, r) {
			if m["type"] == "finding" {
				f, _ := m["file"].(string)
				by[f] = append(by[f], m["kind"].(string)+": "+m["message"].(string))
			}
		}
		return by
	}
	joint := findings(dir)
	apart := findings(seg+".timeindex", seg+".index", seg+".log")
	for _, name := range []string{seg + ".index", seg + ".timeindex"} {
		if len(joint[name]) == 0 {
			t.Errorf("%s: no finding in the directory dump", name)
		}
		if !slices.Equal(joint[name], apart[name]) {
			t.Errorf("%s: the directory dump found\n%q\nchecked on its own\n%q", name, joint[name], apart[name])
		}
	}
}
