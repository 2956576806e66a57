package cmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// TestMessagesInKsegsWords: what kseg says when a command line is wrong
// names the flag or the command and the form it takes, never Go's
// internals (strconv.ParseInt, "arg(s)"), and suggests the flag meant.
func TestMessagesInKsegsWords(t *testing.T) {
	part := clitest.Testdata("partitions/orders-0")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"dump", "--producer-id", "abc", part}, []string{`--producer-id "abc": not a whole number: write it in digits, e.g. --producer-id 100`}},
		{[]string{"dump", "--max-bytes", "2147483648", part}, []string{`--max-bytes "2147483648": too large: --max-bytes takes at most 2147483647`}},
		{[]string{"replay-psm", "--txn-timeout", "15", part}, []string{`--txn-timeout "15": not a duration: a number with a unit (ms, s, m, h), e.g. --txn-timeout 15m`}},
		{[]string{"dump", "--offsets", "10-20", part}, []string{`a range is written FROM:TO, not FROM-TO: --offsets 10:20`}},
		{[]string{"dump", "--offsets", "x:20", part}, []string{`FROM "x" is not an offset; want FROM:TO`}},
		{[]string{"explain", part}, []string{`kseg explain takes OFFSET PATH; got 1 argument: "` + part + `"`}},
		{[]string{"dump", "--ofsets", "1:2", part}, []string{"unknown flag: --ofsets", "Did you mean this?\n\t--offsets"}},
		{[]string{"verify-chain", "--stict-epochs", part, part}, []string{"Did you mean this?\n\t--strict-epochs"}},
		{[]string{"dump", "--max-bytes"}, []string{"--max-bytes needs a value: write it in digits"}},
	}
	for _, tc := range cases {
		r := clitest.Run(tc.args...)
		if r.Code != ui.ExitUsage {
			t.Errorf("kseg %s: exit %d, want %d", strings.Join(tc.args, " "), r.Code, ui.ExitUsage)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.Stderr, w) {
				t.Errorf("kseg %s: stderr does not say %q:\n%s", strings.Join(tc.args, " "), w, r.Stderr)
			}
		}
		for _, internal := range []string{"strconv.", "arg(s)", "invalid argument", "time: "} {
			if strings.Contains(r.Stderr, internal) {
				t.Errorf("kseg %s: stderr speaks Go (%q):\n%s", strings.Join(tc.args, " "), internal, r.Stderr)
			}
		}
	}
}

// TestPluralsAgree: no count in any recorded output or document disagrees
// with its noun ("1 entries", "1 groups", "1 open transactions"): every
// count goes through segment/plural.
func TestPluralsAgree(t *testing.T) {
	// "1 <word>s" where the 1 is a count: not part of a number, an
	// offset range or a path. Words that are singular, or where the 1
	// is a partition number ("partition 1 replicas"), are allowed.
	re := regexp.MustCompile(`(?m)(^|[^0-9A-Za-z_.:/+−-])1 ([a-z][a-z_.]*s)\b`)
	allowed := map[string]bool{"is": true, "was": true, "starts": true, "ms": true, "has": true, "does": true, "replicas": true, "orders": true, "as": true}
	var files []string
	for _, root := range []string{clitest.Testdata("golden"), filepath.Join("..", "docs"), filepath.Join("testdata", "script")} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
	}
	files = append(files, filepath.Join("..", "README.md"))
	if len(files) < 20 {
		t.Fatalf("only %d files to read", len(files))
	}
	for _, p := range files {
		b := testkit.ReadFile(t, p)
		for _, ix := range re.FindAllStringSubmatchIndex(string(b), -1) {
			m := []string{string(b[ix[0]:ix[1]]), "", string(b[ix[4]:ix[5]])}
			// "members 1": a key and its value, not a count.
			if rest := b[ix[1]:]; len(rest) > 1 && rest[0] == ' ' && rest[1] >= '0' && rest[1] <= '9' {
				continue
			}
			if !allowed[m[2]] {
				t.Errorf("%s: %q", p, strings.TrimSpace(m[0]))
			}
		}
	}
}

// TestMessagesAgreeAcrossCommands: severities are spelt ERROR, WARNING,
// INFO in every command; the count line of every report goes to stdout
// (with the report, silenced by -q), nothing to stderr on a clean run;
// metadata names ACL codes as Kafka's enums do and says a --topic it does
// not have does not exist; a dry run does not claim to remove a leftover
// journal temporary file, and applying removes it.
func TestMessagesAgreeAcrossCommands(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	logdir := clitest.Fixture(t, "logdirs/healthy", filepath.Join(root, "logs"))
	broker1 := clitest.Fixture(t, "logdirs/broker-1", filepath.Join(root, "broker-1"))
	parts := clitest.Fixture(t, "partitions", filepath.Join(root, "parts"))

	// Count lines: stdout, and nothing on stderr.
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"dump", filepath.Join(parts, "orders-0")}, "summary: 11 batches"},
		{[]string{"groups", logdir}, "2 __consumer_offsets partitions replayed, 1 group\n"},
		{[]string{"txns", logdir}, "1 of 1 __transaction_state partition replayed"},
		{[]string{"metadata", logdir}, "image at offset 64"},
		{[]string{"replay-psm", filepath.Join(root, "parts")}, "partitions replayed:"},
		{[]string{"check", filepath.Join(parts, "orders-0")}, "kseg check: 1 partition, 0 log directories: 3 checks"},
	} {
		r := clitest.Run(c.args...)
		if !strings.Contains(r.Stdout, c.line) || r.Stderr != "" {
			t.Errorf("kseg %s: the count line %q is not on stdout, or stderr is not empty:\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), c.line, clitest.Head(r.Stdout), r.Stderr)
		}
		q := clitest.Run(append([]string{"-q"}, c.args...)...)
		if strings.Contains(q.Stdout, c.line) {
			t.Errorf("kseg -q %s: the count line is still there", strings.Join(c.args, " "))
		}
	}

	// Severities: the same words everywhere.
	sevRE := regexp.MustCompile(`(?m)^\s*(error|warning|warn|info|Error|Warning|WARN) [a-z]+-[a-z-]+\b`)
	a, b := filepath.Join(root, "a", "events-0"), filepath.Join(root, "b", "events-0")
	clitest.Fixture(t, "broken/crc-mismatch/events-0", a)
	clitest.Fixture(t, "broken/crc-mismatch/events-0", b)
	for _, args := range [][]string{
		{"verify-chain", a, b}, {"dump", a}, {"replay-psm", a}, {"groups", broker1}, {"txns", broker1}, {"metadata", broker1},
		{"repair", "--dry-run", "--backup-dir", filepath.Join(root, "bk"), a},
	} {
		r := clitest.Run(args...)
		if m := sevRE.FindString(r.Stdout + r.Stderr); m != "" {
			t.Errorf("kseg %s: severity spelt %q, want ERROR, WARNING or INFO", strings.Join(args, " "), strings.TrimSpace(m))
		}
		if !strings.Contains(r.Stdout+r.Stderr, "ERROR ") {
			t.Errorf("kseg %s: no ERROR line:\n%s%s", strings.Join(args, " "), clitest.Head(r.Stdout), r.Stderr)
		}
	}

	// Metadata: ACLs by Kafka's names; a topic it does not have.
	r := clitest.Run("metadata", logdir)
	if !strings.Contains(r.Stdout, `resourceType TOPIC resourceName "orders" patternType LITERAL principal User:billing host * operation READ permissionType ALLOW`) {
		t.Errorf("metadata does not name the ACL's codes:\n%s", r.Stdout)
	}
	r = clitest.Run("metadata", "--topic", "nosuch", logdir)
	if r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, `topic "nosuch" does not exist in the metadata image at offset 64`) {
		t.Errorf("metadata --topic nosuch: exit %d\n%s", r.Code, r.Stderr)
	}

	// A leftover journal temporary file: the dry run leaves it and says
	// so; applying removes it.
	dir := filepath.Join(parts, "orders-0")
	tmp := filepath.Join(dir, ".kseg-edit.journal.tmp")
	testkit.WriteFile(t, tmp, []byte("x"))
	backups := filepath.Join(t.TempDir(), "b")
	r = clitest.Run("inject-barrier", "--dry-run", "--timestamp", clitest.InjectTs, "--backup-dir", backups, dir)
	if _, err := os.Stat(tmp); err != nil || !strings.Contains(r.Stderr, "applying the plan removes it (a dry run leaves it)") || strings.Contains(r.Stderr, "; it is removed") {
		t.Errorf("dry run: %v\n%s", err, r.Stderr)
	}
	r = clitest.Run("inject-barrier", "--timestamp", clitest.InjectTs, "--backup-dir", backups, dir)
	if _, err := os.Stat(tmp); r.Code != ui.ExitOK || err == nil {
		t.Errorf("apply: exit %d, the journal temporary file is still there (%v)\n%s", r.Code, err, r.Stderr)
	}
}
