package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/version"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// The global flags -q and -v: -q silences progress and summaries, never
// warnings or errors; -v is --verbose, one meaning before and after the
// command.

// TestQuietSilencesSummaries: -q leaves dump's summary lines out (text and
// table), as the README says; without it they are there.
func TestQuietSilencesSummaries(t *testing.T) {
	dir := clitest.Testdata("partitions/orders-0")
	for _, output := range []string{"text", "table"} {
		loud := clitest.Run("dump", "-o", output, dir).Stdout
		r := clitest.Run("dump", "-q", "-o", output, dir)
		quiet := r.Stdout
		if !strings.Contains(loud, "batches") || !strings.Contains(loud, "tail ") {
			t.Fatalf("%s: no summary without -q:\n%s", output, loud)
		}
		if r.Code != ui.ExitOK || strings.Contains(quiet, "summary:") || strings.Contains(quiet, "validBytes") || r.Stderr != "" {
			t.Errorf("%s -q: exit %d, summaries left in:\n%s%s", output, r.Code, quiet, r.Stderr)
		}
		if !strings.Contains(strings.ToLower(quiet), "offset") {
			t.Errorf("%s -q lost the data:\n%s", output, quiet)
		}
	}
}

// TestWarningsOnStderr: the write commands' warnings are diagnostics, on
// stderr; stdout holds the plan only.
func TestWarningsOnStderr(t *testing.T) {
	ld := t.TempDir()
	src := clitest.Fixture(t, "partitions/orders-0", filepath.Join(ld, "orders-0"))
	// An orphaned time index: inject-barrier and repair warn about it.
	b := testkit.ReadFile(t, filepath.Join(src, "00000000000000000000.timeindex"))
	testkit.WriteFile(t, filepath.Join(src, "00000000000000000099.timeindex"), b)
	for _, tc := range []struct {
		args []string
		warn string
	}{
		{[]string{"inject-barrier", "--dry-run", src}, "orphaned index files"},
		{[]string{"mirror", "--dry-run", src, filepath.Join(ld, "other-0")}, "not named after the source"},
		{[]string{"-o", "table", "mirror", "--dry-run", src, filepath.Join(ld, "other-0")}, "not named after the source"},
	} {
		r := clitest.Run(tc.args...)
		if strings.Contains(strings.ToLower(r.Stdout), "warning:") {
			t.Errorf("%v: a warning on stdout:\n%s", tc.args, r.Stdout)
		}
		if !strings.Contains(r.Stderr, "kseg: warning: ") || !strings.Contains(r.Stderr, tc.warn) {
			t.Errorf("%v: stderr lacks the warning %q:\n%s", tc.args, tc.warn, r.Stderr)
		}
	}
}

// TestQuietKeepsWarnings: -q silences progress and summaries, never
// warnings (README: "warnings stay on stderr"). The views dropped their
// `kseg: warning:` lines under -q, and replay-psm its warning about a
// checkpoint it could not read; the help said -q left "nothing on stderr
// but errors".
func TestQuietKeepsWarnings(t *testing.T) {
	ld := clitest.Fixture(t, "logdirs/healthy", filepath.Join(t.TempDir(), "healthy"))
	// A partition.metadata that does not parse: the views warn and go on.
	testkit.WriteFile(t, filepath.Join(ld, "payments-0", "partition.metadata"), []byte("version: 9\n"))
	// A log-start checkpoint that does not parse: replay-psm warns.
	testkit.WriteFile(t, filepath.Join(ld, "log-start-offset-checkpoint"), []byte("7\n"))
	for _, args := range [][]string{{"groups", ld}, {"txns", ld}, {"metadata", ld}, {"replay-psm", filepath.Join(ld, "orders-0")}} {
		for _, quiet := range []bool{false, true} {
			a := args
			if quiet {
				a = append([]string{"-q"}, args...)
			}
			stderr := clitest.Run(a...).Stderr
			if !strings.Contains(stderr, "kseg: warning: ") {
				t.Errorf("%v: no warning on stderr:\n%s", a, stderr)
			}
			if !quiet {
				continue
			}
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(line, "kseg: warning: ") {
					t.Errorf("%v: stderr holds more than warnings under -q: %q", a, line)
				}
			}
		}
	}
	h := clitest.Run("--help")
	if !strings.Contains(h.Stdout, `leaves errors and "kseg: warning:" lines`) || strings.Contains(h.Stdout, "nothing on stderr but") {
		t.Errorf("kseg --help does not say that -q keeps warnings:\n%s", h.Stdout)
	}
	if doc := clitest.RepoFile(t, "docs/kafka-dump-log.md"); strings.Contains(doc, "Nothing on stderr but errors") || !strings.Contains(doc, "`kseg: warning:` lines still go to stderr") {
		t.Error("docs/kafka-dump-log.md says -q leaves nothing on stderr but errors")
	}
}

// TestQuietKeepsErrors: -q removes progress and notes from stderr, never
// the error that decides the exit code.
func TestQuietKeepsErrors(t *testing.T) {
	r := clitest.Run("-q", "dump", "no/such/dir")
	if r.Code != ui.ExitError || !strings.Contains(r.Stderr, "no such file") {
		t.Errorf("-q dump of a missing path: exit %d, stderr %q; want 1 and the error", r.Code, r.Stderr)
	}
}

// TestVerboseOneMeaning: -v is --verbose and nothing else, and a flag
// written before the subcommand means what it means after it. For every
// command of the tree, "kseg -v CMD ARGS", "kseg CMD -v ARGS" and
// "kseg CMD --verbose ARGS" give the same exit code and the same output:
// the summarising commands' verbose report, a usage error elsewhere
// (kafka-dump-log: Kafka's exit 1 for an option it does not have). Never
// the version: "kseg -v replay-psm DIR" once printed it and exited 0.
func TestVerboseOneMeaning(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	part := clitest.Fixture(t, "partitions/orders-0", filepath.Join(tmp, "a", "orders-0"))
	mirror := clitest.Fixture(t, "partitions/orders-0", filepath.Join(tmp, "b", "orders-0"))
	txn := clitest.Fixture(t, "partitions/txn-0", filepath.Join(tmp, "a", "txn-0"))
	clitest.Mkdir(t, filepath.Join(tmp, "c"))
	backup := clitest.WrittenBackup(t, tmp, "orders-0")
	logdir := clitest.Testdata("logdirs/broker-1")
	log0 := filepath.Join(part, "00000000000000000000.log")

	// One invocation per command, without -v.
	runs := map[string][]string{
		"dump":           {"dump", part},
		"kafka-dump-log": {"kafka-dump-log", "--files", log0},
		"explain":        {"explain", "0", part},
		"version":        {"version"},
		"docs":           {"docs", filepath.Join(tmp, "docs")},
		"replay-psm":     {"replay-psm", txn},
		"inject-barrier": {"inject-barrier", "--dry-run", "--timestamp", clitest.InjectTs, txn},
		"verify-chain":   {"verify-chain", part, mirror},
		"mirror":         {"mirror", "--dry-run", part, filepath.Join(tmp, "c", "orders-0")},
		"repair":         {"repair", "--dry-run", txn},
		"groups":         {"groups", logdir},
		"txns":           {"txns", logdir},
		"metadata":       {"metadata", logdir},
		"completion":     {"completion", "bash"},
		"check":          {"check", part},
		"digest":         {"digest", part},
		"status":         {"status", part},
		"verify-mm2":     {"verify-mm2", part, mirror},
		"restore":        {"restore", "--dry-run", backup},
		"help":           {"help", "dump"},
	}
	root := NewRootCmd(&ui.Streams{})
	// ownVerbose: the command's own -v/--verbose (the summarising ones',
	// and check's, which lists the findings it expected too).
	ownVerbose := map[string]bool{}
	for _, c := range root.Commands() {
		if _, ok := runs[c.Name()]; !ok {
			t.Errorf("command %s has no row: add one", c.Name())
		}
		ownVerbose[c.Name()] = c.LocalNonPersistentFlags().Lookup("verbose") != nil
		if summarising[c.Name()] && !ownVerbose[c.Name()] {
			t.Errorf("%s summarises but has no -v/--verbose of its own", c.Name())
		}
	}
	for name, args := range runs {
		t.Run(name, func(t *testing.T) {
			plain := clitest.Run(args...)
			if plain.Code != ui.ExitOK && plain.Code != ui.ExitFindings {
				t.Fatalf("kseg %s: exit %d %s", strings.Join(args, " "), plain.Code, plain.Stderr)
			}
			before := clitest.Run(append([]string{"-v"}, args...)...)
			after := clitest.Run(append([]string{args[0], "-v"}, args[1:]...)...)
			long := clitest.Run(append([]string{args[0], "--verbose"}, args[1:]...)...)
			for _, r := range []clitest.Result{before, after} {
				if r.Code != long.Code || r.Stdout != long.Stdout || r.Stderr != long.Stderr {
					t.Errorf("kseg %s: exit %d, stdout %q, stderr %q;\nkseg %s: exit %d, stdout %q, stderr %q",
						strings.Join(r.Args, " "), r.Code, clitest.Head(r.Stdout), r.Stderr,
						strings.Join(long.Args, " "), long.Code, clitest.Head(long.Stdout), long.Stderr)
				}
			}
			if strings.Contains(before.Stdout, version.String()) && name != "version" && name != "docs" {
				t.Errorf("kseg -v %s printed the version", name)
			}
			switch {
			case ownVerbose[name]:
				if long.Code != plain.Code || long.Code == ui.ExitUsage {
					t.Errorf("kseg %s --verbose: exit %d, without it %d", name, long.Code, plain.Code)
				}
			case name == "kafka-dump-log":
				if long.Code != ui.ExitError || !strings.Contains(long.Stderr, "not an option of kafka-dump-log") || plain.Code != ui.ExitOK {
					t.Errorf("kafka-dump-log --verbose: exit %d %q (without: %d), want Kafka's exit 1 for an option it lacks", long.Code, long.Stderr, plain.Code)
				}
			default:
				if long.Code != ui.ExitUsage || !strings.Contains(long.Stderr, "-v/--verbose is not a flag of kseg "+name) || long.Stdout != "" || plain.Code != ui.ExitOK {
					t.Errorf("kseg %s --verbose: exit %d %q (without: %d), want a usage error", name, long.Code, long.Stderr, plain.Code)
				}
			}
		})
	}
	// kseg alone: -v is not the version, which is --version.
	r := clitest.Run("-v")
	if r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, "the version is kseg --version") || r.Stdout != "" {
		t.Errorf("kseg -v: exit %d, stdout %q, stderr %q; want a usage error naming --version", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run("--version"); r.Code != ui.ExitOK || !strings.HasPrefix(r.Stdout, "kseg ") {
		t.Errorf("kseg --version: exit %d %q", r.Code, r.Stdout)
	}
	// The help of kseg and of dump does not offer -v; a summarising
	// command's does.
	for _, args := range [][]string{{"--help"}, {"dump", "--help"}} {
		if r := clitest.Run(args...); strings.Contains(r.Stdout, "-v, --verbose") {
			t.Errorf("kseg %s offers -v/--verbose:\n%s", strings.Join(args, " "), r.Stdout)
		}
	}
	if r := clitest.Run("replay-psm", "--help"); !strings.Contains(r.Stdout, "-v, --verbose") {
		t.Errorf("replay-psm --help does not offer -v, --verbose")
	}
}

// -v is --verbose, a flag of the commands that summarise; their help says
// what it does (TestVerboseOneMeaning covers every command).
func TestVerboseFlag(t *testing.T) {
	for name := range summarising {
		code, out, _ := clitest.Exec(t, name, "--help")
		if code != ui.ExitOK || !strings.Contains(out, "-v, --verbose") || !strings.Contains(out, "\nOUTPUT\n") ||
			strings.Index(out, "\nOUTPUT\n") > strings.Index(out, "EXIT STATUS") {
			t.Errorf("%s --help lacks -v/--verbose or its OUTPUT section before EXIT STATUS", name)
		}
	}
	if code, _, _ := clitest.Exec(t, "dump", "--verbose", "x"); code != ui.ExitUsage {
		t.Errorf("dump --verbose: exit %d, want %d (dump prints everything; it has no --verbose)", code, ui.ExitUsage)
	}
}
