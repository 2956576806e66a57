package segtest_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/segtest"
)

// TestCorpusWellFormed: every case has a unique name, changes at least one
// file of its healthy partition, and states a finding inside the file it
// names; the torn tails cover every byte of each base's last batch.
func TestCorpusWellFormed(t *testing.T) {
	c, err := segtest.NewCorpus(filepath.Join(committed, "partitions"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	torn := map[string]int{}
	for _, cc := range c.Cases {
		if names[cc.Name] {
			t.Errorf("duplicate case %s", cc.Name)
		}
		names[cc.Name] = true
		if len(cc.Files) == 0 {
			t.Errorf("%s damages nothing", cc.Name)
		}
		for name, b := range cc.Files {
			if bytes.Equal(b, c.Healthy(cc.Base, name)) {
				t.Errorf("%s: %s is unchanged", cc.Name, name)
			}
		}
		if k, ok := finding.Lookup(cc.Expect.Kind); !ok || k.Severity().String() != cc.Expect.Severity {
			t.Errorf("%s: expects a %s %s, the registry says %s", cc.Name, cc.Expect.Severity, cc.Expect.Kind, k.Severity())
		}
		damaged, ok := cc.Files[cc.Expect.File]
		if !ok {
			damaged = c.Healthy(cc.Base, cc.Expect.File)
		}
		if cc.Expect.Position < 0 || cc.Expect.Position > int64(len(damaged)) {
			t.Errorf("%s: position %d outside %s (%d bytes)", cc.Name, cc.Expect.Position, cc.Expect.File, len(damaged))
		}
		if cc.Expect.Severity != segtest.SeverityError && cc.Expect.Kind != segtest.KindZeroTail {
			t.Errorf("%s: only a zero-filled tail is a warning", cc.Name)
		}
		if cc.Class == "torn-tail" {
			torn[cc.Base]++
		}
	}
	for _, base := range segtest.CorpusBases {
		if torn[base] < 50 {
			t.Errorf("%s: %d torn tails", base, torn[base])
		}
	}
	if len(c.Classes()) < 45 {
		t.Errorf("%d classes", len(c.Classes()))
	}
}
