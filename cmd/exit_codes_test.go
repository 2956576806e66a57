package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestExitCodesAgree feeds every command the same situations and checks
// the one exit code the README's "Exit status" gives each: a healthy input
// exits 0; an offset past the log end is a usage error (2); an invalid
// batch is a finding (3) whatever command meets it; a question the input
// cannot answer — a group, transactional id or topic that is not there, a
// view whose internal topic is not in the directories, an offset in a gap
// — is a usage error (2), after what could be answered. A command a
// situation does not apply to says why in na; a new command must be
// placed in every situation.
func TestExitCodesAgree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cp := func(from, to string) string { return clitest.Fixture(t, from, filepath.Join(root, to)) }
	part := cp("partitions/orders-0", "a/orders-0")
	mirror := cp("partitions/orders-0", "b/orders-0")
	compacted := cp("partitions/compacted-0", "a/compacted-0")
	bad := cp("broken/crc-mismatch/events-0", "a/events-0")
	badMirror := cp("broken/crc-mismatch/events-0", "b/events-0")
	badMM2 := cp("broken/crc-mismatch/events-0", "b/A.events-0")
	mm2 := cp("partitions/orders-0", "b/A.orders-0")
	backup := clitest.WrittenBackup(t, root, "orders-0")
	logdir := cp("logdirs/healthy", "logs")
	noInternal := filepath.Join(root, "plain")
	cp("partitions/orders-0", "plain/orders-0")
	// A log directory whose internal partitions each hold an invalid
	// batch where the views read: the first batch of __consumer_offsets-9
	// and __transaction_state-0, the last of __cluster_metadata-0 (the
	// image replays from the snapshot at 60).
	badViews := cp("logdirs/healthy", "badlogs")
	flipLastByte(t, filepath.Join(badViews, "__consumer_offsets-9", "00000000000000000000.log"), false)
	flipLastByte(t, filepath.Join(badViews, "__transaction_state-0", "00000000000000000000.log"), false)
	flipLastByte(t, filepath.Join(badViews, "__cluster_metadata-0", "00000000000000000000.log"), true)
	dst := clitest.Mkdir(t, filepath.Join(root, "c"))
	backups := filepath.Join(t.TempDir(), "b")
	write := func(args ...string) []string {
		return append([]string{args[0], "--dry-run", "--backup-dir", backups}, args[1:]...)
	}
	type run struct {
		args []string
		want int
	}
	// Every command that reads a partition (and its mirrors) or a log
	// directory, over one set of inputs, held to one exit code: a healthy
	// set exits 0, a set with an invalid batch exits 3 whatever command
	// meets it.
	type inputs struct {
		part, upstream, mm2 string // upstream: a copy of part, mm2: one named as MM2 names it
		logdir              string
		explainAt           string // an offset inside the invalid batch where there is one
	}
	everyReader := func(in inputs, want int) map[string]run {
		return map[string]run{
			"dump":           {[]string{"dump", in.part}, want},
			"explain":        {[]string{"explain", in.explainAt, in.part}, want},
			"replay-psm":     {[]string{"replay-psm", in.part}, want},
			"inject-barrier": {write("inject-barrier", "--timestamp", clitest.InjectTs, in.part), want},
			"repair":         {write("repair", in.part), want},
			"mirror":         {write("mirror", in.part, filepath.Join(dst, filepath.Base(in.part))), want},
			"verify-chain":   {[]string{"verify-chain", in.upstream, in.part}, want},
			"groups":         {[]string{"groups", in.logdir}, want},
			"txns":           {[]string{"txns", in.logdir}, want},
			"metadata":       {[]string{"metadata", in.logdir}, want},
			"check":          {[]string{"check", in.part}, want},
			"status":         {[]string{"status", in.part}, want},
			"verify-mm2":     {[]string{"verify-mm2", in.part, in.mm2}, want},
			// Kafka's DumpLogSegments prints isvalid: false and exits 0;
			// kafka-dump-log keeps Kafka's exit codes (its help says so).
			"kafka-dump-log": {[]string{"kafka-dump-log", "--files", filepath.Join(in.part, "00000000000000000000.log")}, ui.ExitOK},
		}
	}
	healthy := everyReader(inputs{part: part, upstream: mirror, mm2: mm2, logdir: logdir, explainAt: "5"}, ui.ExitOK)
	healthy["digest"] = run{[]string{"digest", part}, ui.ExitOK}
	healthy["restore"] = run{[]string{"restore", "--dry-run", backup}, ui.ExitOK}
	situations := map[string]map[string]run{
		"healthy":          healthy,
		"an invalid batch": everyReader(inputs{part: bad, upstream: badMirror, mm2: badMM2, logdir: badViews, explainAt: "4"}, ui.ExitFindings),
		"an offset past the log end": {
			"explain":    {[]string{"explain", "999", part}, ui.ExitUsage},
			"replay-psm": {[]string{"replay-psm", "--upto", "999", part}, ui.ExitUsage},
			"mirror":     {write("mirror", "--upto", "999", part, filepath.Join(dst, "orders-0")), ui.ExitUsage},
			"metadata":   {[]string{"metadata", "--at", "999", logdir}, ui.ExitUsage},
			// A filter selects: nothing selected is an answer.
			"dump": {[]string{"dump", "--offsets", "999:", part}, ui.ExitOK},
		},
		"a question the input cannot answer": {
			"explain":           {[]string{"explain", "9", compacted}, ui.ExitUsage}, // a gap compaction left
			"groups":            {[]string{"groups", "--group", "nosuch", logdir}, ui.ExitUsage},
			"groups no topic":   {[]string{"groups", noInternal}, ui.ExitUsage},
			"txns":              {[]string{"txns", "--transactional-id", "nosuch", logdir}, ui.ExitUsage},
			"txns no topic":     {[]string{"txns", noInternal}, ui.ExitUsage},
			"metadata":          {[]string{"metadata", "--topic", "nosuch", logdir}, ui.ExitUsage},
			"metadata no topic": {[]string{"metadata", noInternal}, ui.ExitUsage},
		},
	}
	// Why a command has no row in a situation.
	na := map[string]string{
		"an offset past the log end/kafka-dump-log":         "takes no offset",
		"an offset past the log end/inject-barrier":         "takes no offset",
		"an offset past the log end/repair":                 "takes no offset",
		"an offset past the log end/verify-chain":           "takes no offset",
		"an offset past the log end/groups":                 "takes no offset",
		"an offset past the log end/txns":                   "takes no offset",
		"a question the input cannot answer/dump":           "asks nothing: it decodes what is there",
		"a question the input cannot answer/kafka-dump-log": "asks nothing",
		"a question the input cannot answer/replay-psm":     "--upto past the end is the offset situation",
		"a question the input cannot answer/inject-barrier": "a write: it refuses (4) what it will not do",
		"a question the input cannot answer/repair":         "a write",
		"a question the input cannot answer/mirror":         "a write",
		"a question the input cannot answer/verify-chain":   "asks nothing beyond its directories",
		"an offset past the log end/check":                  "takes no offset",
		"an offset past the log end/digest":                 "takes no offset",
		"an offset past the log end/status":                 "takes no offset",
		"an offset past the log end/verify-mm2":             "takes no offset",
		"an offset past the log end/restore":                "takes no offset",
		"an invalid batch/digest":                           "records the log as it is, damage and tail included, for verify-chain to judge where the digest is read",
		"an invalid batch/restore":                          "puts back the bytes a write replaced, whatever they hold",
		"a question the input cannot answer/check":          "asks nothing: it checks what is there",
		"a question the input cannot answer/digest":         "asks nothing",
		"a question the input cannot answer/status":         "asks nothing",
		"a question the input cannot answer/verify-mm2":     "asks nothing beyond its directories",
		"a question the input cannot answer/restore":        "a write",
	}
	skip := map[string]bool{"help": true, "completion": true, "version": true, "docs": true}
	for _, c := range NewRootCmd(&ui.Streams{}).Commands() {
		if skip[c.Name()] {
			continue
		}
		for sit, runs := range situations {
			if _, ok := runs[c.Name()]; !ok && na[sit+"/"+c.Name()] == "" {
				t.Errorf("%s: no row for %s, and no reason it does not apply", sit, c.Name())
			}
		}
	}
	for sit, runs := range situations {
		for name, r := range runs {
			t.Run(sit+"/"+name, func(t *testing.T) {
				got := clitest.Run(r.args...)
				if got.Code != r.want {
					t.Errorf("kseg %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), got.Code, r.want, clitest.Head(got.Stdout), got.Stderr)
				}
				if got.Code == ui.ExitUsage && strings.Contains(sit, "cannot answer") && !strings.Contains(got.Stdout+got.Stderr, "UNANSWERABLE") &&
					!strings.Contains(got.Stderr, "does not exist") && !strings.Contains(got.Stderr, "no batch holds") && !strings.Contains(got.Stderr, "no KRaft metadata log") {
					t.Errorf("kseg %s: exit 2 without saying what cannot be answered:\n%s%s", strings.Join(r.args, " "), got.Stdout, got.Stderr)
				}
			})
		}
	}
}

// flipLastByte flips the last byte of the first (or last) batch of a
// .log: inside its records, so that the batch still frames and fails its
// CRC.
func flipLastByte(t *testing.T, path string, lastBatch bool) {
	t.Helper()
	damageLog(t, path, func(log []byte, pos []int64) []byte {
		end := int64(len(log))
		if !lastBatch {
			end = pos[1]
		}
		log[end-1] ^= 1
		return log
	})
}
