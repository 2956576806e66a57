package clitest

import (
	"testing"

	"github.com/kseg/kseg/segment/segtest"
)

// Corpus is the corruption corpus (segtest.NewCorpus) built over
// testdata/partitions, what the command tests that walk damaged logs
// write their cases from.
func Corpus(t testing.TB) *segtest.Corpus {
	t.Helper()
	c, err := segtest.NewCorpus(Testdata("partitions"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// WriteCorpusCase writes the corpus case cc into the log directory dir
// and returns its partition directory.
func WriteCorpusCase(t testing.TB, c *segtest.Corpus, cc *segtest.CorruptCase, dir string) string {
	t.Helper()
	pd, err := c.Write(cc, dir)
	if err != nil {
		t.Fatal(err)
	}
	return pd
}
