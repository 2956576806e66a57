package kafkadumplog_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kseg/kseg/cmd"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestKafkaDumpLogMapping keeps docs/kafka-dump-log.md honest: every
// kafka-dump-log option has a row, every kseg flag the page names exists
// on `kseg dump`, and every visible `kseg dump` flag is on the page.
func TestKafkaDumpLogMapping(t *testing.T) {
	doc := clitest.RepoFile(t, "docs/kafka-dump-log.md")
	for _, opt := range []string{"--files", "--print-data-log", "--deep-iteration", "--verify-index-only",
		"--index-sanity-check", "--max-message-size", "--max-bytes", "--value-decoder-class", "--key-decoder-class",
		"--offsets-decoder", "--transaction-log-decoder", "--cluster-metadata-decoder", "--remote-log-metadata-decoder",
		"--share-group-state-decoder", "--skip-record-metadata"} {
		if !strings.Contains(doc, "| `"+opt) {
			t.Errorf("docs/kafka-dump-log.md has no row for kafka-dump-log %s", opt)
		}
	}
	s, _, _ := ui.TestStreams()
	root := cmd.NewRootCmd(s)
	dump, _, err := root.Find([]string{"dump"})
	if err != nil {
		t.Fatal(err)
	}
	// Rows of the mapping table: | `kafka opt` | kseg column | notes |
	row := regexp.MustCompile("(?m)^\\| `(--[a-z-]+)[^|]*\\| ([^|]*)\\|")
	flag := regexp.MustCompile("`(--[a-z-]+)")
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		for _, f := range flag.FindAllStringSubmatch(m[2], -1) {
			name := strings.TrimPrefix(f[1], "--")
			if dump.Flags().Lookup(name) == nil && dump.InheritedFlags().Lookup(name) == nil && name != "version" && name != "help" {
				t.Errorf("docs/kafka-dump-log.md maps %s to kseg dump %s, which does not exist", m[1], f[1])
			}
		}
	}
	dump.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" && !strings.Contains(doc, "`--"+f.Name) {
			t.Errorf("kseg dump --%s is not on docs/kafka-dump-log.md (add it to the mapping or to \"What kseg dump adds\")", f.Name)
		}
	})
}
