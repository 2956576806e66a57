package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/ui"
)

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
	part := filepath.Join(tmp, "a", "orders-0")
	copyInputDir(t, filepath.Join("..", "testdata", "partitions", "orders-0"), part)
	mirror := filepath.Join(tmp, "b", "orders-0")
	copyInputDir(t, filepath.Join("..", "testdata", "partitions", "orders-0"), mirror)
	txn := filepath.Join(tmp, "a", "txn-0")
	copyInputDir(t, filepath.Join("..", "testdata", "partitions", "txn-0"), txn)
	if err := os.Mkdir(filepath.Join(tmp, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A backup of a completed write, for restore.
	written := filepath.Join(tmp, "w", "orders-0")
	copyInputDir(t, filepath.Join("..", "testdata", "partitions", "orders-0"), written)
	backup := filepath.Join(tmp, "backup")
	if r := runKseg("inject-barrier", "--timestamp", injectTs, "--backup-dir", backup, written); r.code != ui.ExitOK {
		t.Fatalf("inject-barrier for a backup: exit %d\n%s", r.code, r.stderr)
	}
	logdir := filepath.Join("..", "testdata", "logdirs", "broker-1")
	log0 := filepath.Join(part, "00000000000000000000.log")

	// One invocation per command, without -v.
	runs := map[string][]string{
		"dump":           {"dump", part},
		"kafka-dump-log": {"kafka-dump-log", "--files", log0},
		"explain":        {"explain", "0", part},
		"version":        {"version"},
		"docs":           {"docs", filepath.Join(tmp, "docs")},
		"replay-psm":     {"replay-psm", txn},
		"inject-barrier": {"inject-barrier", "--dry-run", "--timestamp", injectTs, txn},
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
			plain := runKseg(args...)
			if plain.code != ui.ExitOK && plain.code != ui.ExitFindings {
				t.Fatalf("kseg %s: exit %d %s", strings.Join(args, " "), plain.code, plain.stderr)
			}
			before := runKseg(append([]string{"-v"}, args...)...)
			after := runKseg(append([]string{args[0], "-v"}, args[1:]...)...)
			long := runKseg(append([]string{args[0], "--verbose"}, args[1:]...)...)
			for _, r := range []runResult{before, after} {
				if r.code != long.code || r.stdout != long.stdout || r.stderr != long.stderr {
					t.Errorf("kseg %s: exit %d, stdout %q, stderr %q;\nkseg %s: exit %d, stdout %q, stderr %q",
						strings.Join(r.args, " "), r.code, head(r.stdout), r.stderr,
						strings.Join(long.args, " "), long.code, head(long.stdout), long.stderr)
				}
			}
			if strings.Contains(before.stdout, versionString()) && name != "version" && name != "docs" {
				t.Errorf("kseg -v %s printed the version", name)
			}
			switch {
			case ownVerbose[name]:
				if long.code != plain.code || long.code == ui.ExitUsage {
					t.Errorf("kseg %s --verbose: exit %d, without it %d", name, long.code, plain.code)
				}
			case name == "kafka-dump-log":
				if long.code != ui.ExitError || !strings.Contains(long.stderr, "not an option of kafka-dump-log") || plain.code != ui.ExitOK {
					t.Errorf("kafka-dump-log --verbose: exit %d %q (without: %d), want Kafka's exit 1 for an option it lacks", long.code, long.stderr, plain.code)
				}
			default:
				if long.code != ui.ExitUsage || !strings.Contains(long.stderr, "-v/--verbose is not a flag of kseg "+name) || long.stdout != "" || plain.code != ui.ExitOK {
					t.Errorf("kseg %s --verbose: exit %d %q (without: %d), want a usage error", name, long.code, long.stderr, plain.code)
				}
			}
		})
	}
	// kseg alone: -v is not the version, which is --version.
	r := runKseg("-v")
	if r.code != ui.ExitUsage || !strings.Contains(r.stderr, "the version is kseg --version") || r.stdout != "" {
		t.Errorf("kseg -v: exit %d, stdout %q, stderr %q; want a usage error naming --version", r.code, r.stdout, r.stderr)
	}
	if r := runKseg("--version"); r.code != ui.ExitOK || !strings.HasPrefix(r.stdout, "kseg ") {
		t.Errorf("kseg --version: exit %d %q", r.code, r.stdout)
	}
	// The help of kseg and of dump does not offer -v; a summarising
	// command's does.
	for _, args := range [][]string{{"--help"}, {"dump", "--help"}} {
		if r := runKseg(args...); strings.Contains(r.stdout, "-v, --verbose") {
			t.Errorf("kseg %s offers -v/--verbose:\n%s", strings.Join(args, " "), r.stdout)
		}
	}
	if r := runKseg("replay-psm", "--help"); !strings.Contains(r.stdout, "-v, --verbose") {
		t.Errorf("replay-psm --help does not offer -v, --verbose")
	}
}

// head is the first lines of s, for messages.
func head(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	if len(lines) > 3 {
		lines = append(lines[:3], "…")
	}
	return strings.Join(lines, "\n")
}

// -v is --verbose, a flag of the commands that summarise; their help says
// what it does (TestVerboseOneMeaning covers every command).
func TestVerboseFlag(t *testing.T) {
	for name := range summarising {
		code, out, _ := injRun(t, name, "--help")
		if code != ui.ExitOK || !strings.Contains(out, "-v, --verbose") || !strings.Contains(out, "\nOUTPUT\n") ||
			strings.Index(out, "\nOUTPUT\n") > strings.Index(out, "EXIT STATUS") {
			t.Errorf("%s --help lacks -v/--verbose or its OUTPUT section before EXIT STATUS", name)
		}
	}
	if code, _, _ := injRun(t, "dump", "--verbose", "x"); code != ui.ExitUsage {
		t.Errorf("dump --verbose: exit %d, want %d (dump prints everything; it has no --verbose)", code, ui.ExitUsage)
	}
}
