package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/verifychain"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/kafkatest"
)

// The scenarios of barrier.md §9, end to end: partitions written by real
// kgo producers on kfake clusters (one cluster per Kafka cluster of the
// topology; every cluster's transactional producer gets the same producer
// id, and every cluster's first idempotent producer id 1000, so ids
// collide across failovers), mirrored with `kseg mirror`, failed over with
// `kseg inject-barrier`, extended with each cluster's own producers'
// writes (appended as its broker would, barriertest.AppendLocal), and
// checked with `kseg verify-chain`. The commands and their output are
// docs/scenarios.md's examples: TestScenarios fails when the document
// drifts, and KSEG_UPDATE_DOCS=1 rewrites it. docs/failover.md's worked
// example is held to kseg's output the same way (TestFailoverDocExamples,
// at the end).

const (
	shownData   = "/data"             // where the clusters' log directories are shown
	shownBackup = "/srv/kseg-backups" // where the backups are shown
)

// mirrorFlags are the destination topics' settings in every scenario:
// small segments and index intervals, so a few batches span several
// segments and index entries.
var mirrorFlags = []string{"--segment-bytes", "300", "--index-interval-bytes", "100"}

// localOpts are the same settings for the clusters' own writes.
var localOpts = segment.AppenderOptions{SegmentBytes: 300, IndexIntervalBytes: 100}

// scenario runs kseg commands in one topology and records them, with
// their output, as documentation blocks.
type scenario struct {
	owner  *testing.T // whose life the topology's directories and producers have
	t      *testing.T
	root   string
	backup string
	nb     int
	blocks map[string]string
}

// newScenario keeps its directories for the life of owner (a parent test
// whose subtests share a topology); failures go to t.
func newScenario(owner, t *testing.T, blocks map[string]string) *scenario {
	return &scenario{owner: owner, t: t, root: owner.TempDir(), backup: owner.TempDir(), blocks: blocks}
}

// dir is the partition directory of topic-partition on a cluster.
func (s *scenario) dir(cluster, topic string, partition int32) string {
	return barriertest.PartitionDir(s.t, s.root, cluster, topic, partition)
}

// bk is a fresh backup directory.
func (s *scenario) bk() string {
	s.nb++
	return filepath.Join(s.backup, fmt.Sprint(s.nb))
}

func (s *scenario) shown(text string) string {
	text = strings.ReplaceAll(text, s.backup, shownBackup)
	return strings.ReplaceAll(text, s.root, shownData)
}

// source writes A's partition orders-0 with the source traffic
// (barriertest.SourceTraffic) and returns it and its producers, which go
// on writing as long as the topology lives.
func (s *scenario) source() (string, *barriertest.Producers) {
	p := barriertest.NewProducers(s.owner, "orders", 0)
	p.SourceTraffic(s.t)
	return barriertest.WriteSource(s.t, filepath.Join(s.root, "a"), "orders", 0, p.Take(s.t)), p
}

// local appends to dir the traffic of a fresh set of producers
// (barriertest.LocalTraffic), as its cluster's own clients write once it
// has failed over, and returns them.
func (s *scenario) local(dir string) *barriertest.Producers {
	p := barriertest.NewProducers(s.owner, "orders", 0)
	p.LocalTraffic(s.t)
	barriertest.AppendLocal(s.t, dir, p.Take(s.t), localOpts)
	return p
}

// mirror runs kseg mirror from to with the scenario's segment settings
// (mirrorFlags), the extra flags and a fresh backup directory, as kseg
// does: it must succeed.
func (s *scenario) mirror(block string, excerpt func(string) string, from, to string, extra ...string) string {
	s.t.Helper()
	args := append(append(append([]string{"mirror"}, mirrorFlags...), extra...), "--backup-dir", s.bk(), from, to)
	return s.kseg(block, excerpt, ui.ExitOK, args...)
}

// kseg runs kseg with args, wants exit code want, records the command and
// its output (stdout, then stderr) as block (unless block is ""), cut by
// excerpt when it is not nil, and returns stdout.
func (s *scenario) kseg(block string, excerpt func(string) string, want int, args ...string) string {
	s.t.Helper()
	code, out, errOut := clitest.Exec(s.t, args...)
	if code != want {
		s.t.Fatalf("kseg %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
	}
	if args[0] == "verify-chain" {
		clitest.VerifyChainOverDigests(s.t, args)
	}
	if block != "" {
		shownOut := out + errOut
		if excerpt != nil {
			shownOut = excerpt(shownOut)
		}
		cmd := "$ kseg " + s.shown(strings.Join(args, " ")) + "\n"
		if want != ui.ExitOK {
			cmd = fmt.Sprintf("$ kseg %s    # exit %d\n", s.shown(strings.Join(args, " ")), want)
		}
		s.blocks[block] += cmd + s.shown(shownOut)
	}
	return out
}

// indexesClean runs kafka-dump-log's index checks (dump --verify-index)
// on partition directories the scenario wrote.
func (s *scenario) indexesClean(dirs ...string) {
	s.t.Helper()
	for _, d := range dirs {
		if code, out, errOut := clitest.Exec(s.t, "dump", "--verify-index", d); code != ui.ExitOK {
			s.t.Fatalf("dump --verify-index %s: exit %d\n%s%s", d, code, out, errOut)
		}
	}
}

// lines keeps the output lines that start with one of prefixes.
func lines(prefixes ...string) func(string) string {
	return func(out string) string {
		var b strings.Builder
		for _, l := range strings.SplitAfter(out, "\n") {
			for _, p := range prefixes {
				if strings.HasPrefix(l, p) {
					b.WriteString(l)
					break
				}
			}
		}
		return b.String()
	}
}

// from keeps the output from the first line that starts with prefix.
func from(prefix string) func(string) string {
	return func(out string) string {
		if i := strings.Index(out, "\n"+prefix); i >= 0 {
			return out[i+1:]
		}
		return out
	}
}

// chainJSON runs verify-chain --output json and decodes its edge lines.
func (s *scenario) chainJSON(args ...string) []verifychain.EdgeJSON {
	s.t.Helper()
	code, out, errOut := clitest.Exec(s.t, append([]string{"verify-chain", "--output", "json"}, args...)...)
	if code != ui.ExitOK {
		s.t.Fatalf("verify-chain --output json: exit %d\n%s%s", code, out, errOut)
	}
	var edges []verifychain.EdgeJSON
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, `{"type":"edge"`) {
			continue
		}
		var e verifychain.EdgeJSON
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			s.t.Fatalf("%v: %s", err, l)
		}
		if e.Type == "edge" {
			edges = append(edges, e)
		}
	}
	return edges
}

var txnPID = kafkatest.TxnProducerID(barriertest.TxnID)

func TestScenarios(t *testing.T) {
	t.Parallel()
	blocks := map[string]string{}
	pidText := fmt.Sprint(txnPID)

	// Active-passive: B mirrors A, B fails over, B's producers write.
	var apWorld *scenario
	var a, b string
	var pa, pb *barriertest.Producers
	owner := t
	t.Run("active-passive", func(t *testing.T) {
		// The topology outlives this subtest: failback goes on with it.
		s := newScenario(owner, t, blocks)
		a, pa = s.source()
		b = s.dir("b", "orders", 0)
		out := s.kseg("ap-mirror", nil, ui.ExitOK, append(append([]string{"mirror", "--upto", "7"}, mirrorFlags...), "--backup-dir", s.bk(), a, b)...)
		clitest.MustContain(t, out, "new partition directory", "Copy: offsets [0, 7)", "Verified:")
		out = s.kseg("ap-lagging", nil, ui.ExitOK, "verify-chain", a, b)
		clitest.MustContain(t, out, "lagging by 6 offsets", "1 edge, 1 consistent")
		s.mirror("ap-catch-up", lines("$", "Copy:", "Done:", "Verified:"), a, b)
		s.indexesClean(b) // the active segment was continued

		// A B that takes writes without failing over is caught.
		broken := s.dir("b2", "orders", 0)
		clitest.CopyTree(t, b, broken)
		s.local(broken)
		out = s.kseg("ap-no-barrier", nil, ui.ExitFindings, "verify-chain", a, broken)
		clitest.MustContain(t, out, "beyond-upstream-end at offset 13", "pid-collision at offset 13")

		out = s.kseg("ap-failover", lines("$", "Cut:", "Done:", "Verified:"), ui.ExitOK, "inject-barrier", "--backup-dir", s.bk(), b)
		clitest.MustContain(t, out, "Done: barrier at offset 10")
		pb = s.local(b)
		out = s.kseg("ap-verify", nil, ui.ExitOK, "verify-chain", a, b)
		clitest.MustContain(t, out, "failed over", "offset 10 (", "local               [11, 15)", "1000, "+pidText, "collisions averted  2;")
		e := s.chainJSON(a, b)
		if len(e) != 1 || e[0].Status != "failed-over" || e[0].Barrier == nil || e[0].Barrier.Offset != 10 ||
			!slices.Equal(e[0].ProducersReused, []int64{1000, txnPID}) || e[0].CollisionsAverted != 2 || !e[0].Consistent {
			t.Fatalf("json: %+v", e)
		}
		apWorld = s
	})

	// Failback: A comes back, aligns to B and mirrors it, then fails over
	// itself.
	t.Run("failback", func(t *testing.T) {
		if apWorld == nil {
			t.Skip("active-passive failed")
		}
		s := apWorld
		s.t = t
		flags := append([]string{"mirror"}, mirrorFlags...)
		out := s.kseg("fb-refused", nil, ui.ExitFindings, append(flags, b, a)...)
		_ = out
		out = s.mirror("fb-align", nil, b, a, "--align")
		clitest.MustContain(t, out, "Truncate: at offset 10", "Copy: offsets [10, 15)")
		s.indexesClean(a)
		out = s.kseg("fb-verify", nil, ui.ExitOK, "verify-chain", "--edge", "2=1", a, b)
		clitest.MustContain(t, out, "in sync", "mirrored barriers   10 (clears")
		pb.Txn(t, 1, kafkatest.Commit)
		barriertest.AppendLocal(t, b, pb.Take(t), localOpts)
		s.mirror("fb-catch-up", lines("$", "Copy:", "Done:"), b, a)
		out = s.kseg("fb-failover", lines("$", "Cut:", "Done:"), ui.ExitOK, "inject-barrier", "--backup-dir", s.bk(), a)
		clitest.MustContain(t, out, "MIRROR_PID_RESET", "Done:")
		pa.LocalTraffic(t)
		barriertest.AppendLocal(t, a, pa.Take(t), localOpts)
		out = s.kseg("fb-verify2", nil, ui.ExitOK, "verify-chain", "--edge", "2=1", a, b)
		clitest.MustContain(t, out, "failed over", "mirrored barriers   10 (clears")
		s.indexesClean(a, b)
	})

	// Fan-out: B and C mirror A; each fails over on its own.
	t.Run("fan-out", func(t *testing.T) {
		s := newScenario(t, t, blocks)
		a, _ := s.source()
		b, c := s.dir("b", "orders", 0), s.dir("c", "orders", 0)
		s.mirror("fo-mirror", lines("$", "Copy:", "Done:"), a, b)
		s.mirror("fo-mirror", lines("$", "Copy:", "Done:"), a, c, "--upto", "9")
		s.kseg("fo-failover", lines("$", "Done:"), ui.ExitOK, "inject-barrier", "--backup-dir", s.bk(), b)
		s.kseg("fo-failover", lines("$", "Mode:", "  offset", "Done:"), ui.ExitOK, "inject-barrier", "--mode", "abort", "--bump-leader-epoch", "3",
			"--timestamp", "1767225600000", "--backup-dir", s.bk(), c)
		for _, d := range []string{b, c} {
			s.local(d)
		}
		out := s.kseg("fo-verify", nil, ui.ExitOK, "verify-chain", "--edge", "1=2", "--edge", "1=3", a, b, c)
		clitest.MustContain(t, out, "2 edges, 2 consistent", "after ABORT markers at 9")
	})

	// Fan-in: two source partitions into two partitions of one
	// destination cluster.
	t.Run("fan-in", func(t *testing.T) {
		s := newScenario(t, t, blocks)
		a, _ := s.source()
		pb := barriertest.NewProducers(t, "payments", 0)
		pb.SourceTraffic(t)
		pb.Txn(t, 1, kafkatest.Abort) // aborts the open transaction; payments ends committed
		b := barriertest.WriteSource(t, filepath.Join(s.root, "b"), "payments", 0, pb.Take(t))
		co, cp := s.dir("c", "orders", 0), s.dir("c", "payments", 0)
		s.mirror("fi-mirror", lines("$", "Copy:", "Done:"), a, co)
		s.mirror("fi-mirror", lines("$", "Copy:", "Done:"), b, cp)
		s.kseg("fi-failover", lines("$", "Done:"), ui.ExitOK, "inject-barrier", "--backup-dir", s.bk(), co)
		s.kseg("fi-failover", lines("$", "Done:"), ui.ExitOK, "inject-barrier", "--backup-dir", s.bk(), cp)
		pc := s.local(co)
		pcp := pc.On(t, "payments", 0)
		pcp.Idempotent(t, 2)
		barriertest.AppendLocal(t, cp, pcp.Take(t), localOpts)
		out := s.kseg("fi-verify", nil, ui.ExitOK, "verify-chain", "--edge", "1=3", "--edge", "2=4", a, b, co, cp)
		clitest.MustContain(t, out, "2 edges, 2 consistent")
	})

	// Chain: A → B → C, B fails over; C gets B's barrier as data.
	t.Run("chain", func(t *testing.T) {
		s := newScenario(t, t, blocks)
		a, _ := s.source()
		b, c := s.dir("b", "orders", 0), s.dir("c", "orders", 0)
		s.mirror("ch-setup", lines("$", "Done:"), a, b)
		// C mirrors B up to B's last stable offset, as a read_committed
		// mirror fetcher does (barrier.md §3.1).
		s.mirror("ch-setup", lines("$", "Done:"), b, c, "--upto", "10")
		s.kseg("ch-setup", lines("$", "Done:"), ui.ExitOK, "inject-barrier", "--backup-dir", s.bk(), b)
		s.local(b)
		out := s.mirror("ch-mirror", nil, b, c)
		clitest.MustContain(t, out, "Copy: offsets [10, 15)", "MIRROR_PID_RESET barriers copied: 10")
		out = s.kseg("ch-verify", nil, ui.ExitOK, "verify-chain", a, b, c)
		clitest.MustContain(t, out, "2 edges, 2 consistent", "mirrored barriers   10 (clears 2 producers in D)")
		out = s.kseg("ch-replay", from("MIRROR_PID_RESET barriers"), ui.ExitOK, "replay-psm", "--from-snapshot", "none", c)
		clitest.MustContain(t, out, "0 anomalies")
		out = s.kseg("ch-replay-ignored", lines("$", "counts", "  ERROR"), ui.ExitFindings, "replay-psm", "--from-snapshot", "none", "--ignore-barriers", c)
		clitest.MustContain(t, out, "pid-collision")
	})

	// A four-link chain A → B → C → D → E: C fails over, D and E follow it,
	// B keeps mirroring A.
	t.Run("four-link-chain", func(t *testing.T) {
		s := newScenario(t, t, blocks)
		a, p := s.source()
		dirs := []string{a}
		for _, c := range []string{"b", "c", "d", "e"} {
			dirs = append(dirs, s.dir(c, "orders", 0))
		}
		for i := 1; i < len(dirs); i++ {
			s.mirror("fl-setup", lines("$", "Done:"), dirs[i-1], dirs[i])
		}
		s.kseg("fl-setup", lines("$", "Done:"), ui.ExitOK, "inject-barrier", "--backup-dir", s.bk(), dirs[2])
		s.local(dirs[2])
		p.Txn(t, 1, kafkatest.Commit) // A goes on (its open transaction is aborted first)
		barriertest.AppendLocal(t, a, p.Take(t), localOpts)
		s.mirror("fl-setup", lines("$", "Done:"), dirs[0], dirs[1])
		for i := 3; i < len(dirs); i++ {
			s.mirror("fl-setup", lines("$", "Done:"), dirs[i-1], dirs[i], "--align")
		}
		s.indexesClean(dirs...)
		out := s.kseg("fl-verify", nil, ui.ExitOK, append([]string{"verify-chain"}, dirs...)...)
		clitest.MustContain(t, out, "4 edges, 4 consistent")
		e := s.chainJSON(dirs...)
		if len(e) != 4 || e[0].Status != "in-sync" || e[1].Status != "failed-over" || e[2].Status != "in-sync" || e[3].Status != "in-sync" ||
			len(e[3].MirroredBarriers) != 1 || e[3].MirroredBarriers[0].Offset != 10 {
			t.Fatalf("json: %+v", e)
		}
	})

	checkDocBlocks(t, "../docs/scenarios.md", blocks)
}

// checkDocBlocks compares the example blocks of doc with blocks, failing
// on drift; KSEG_UPDATE_DOCS=1 rewrites them.
func checkDocBlocks(t *testing.T, doc string, blocks map[string]string) {
	t.Helper()
	if t.Failed() {
		return
	}
	src, err := os.ReadFile(doc)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	re := regexp.MustCompile("(?s)<!-- example:([a-z0-9-]+) -->\n```text\n(.*?)```\n<!-- end -->")
	seen := map[string]bool{}
	var drift []string
	updated := re.ReplaceAllFunc(src, func(m []byte) []byte {
		sm := re.FindSubmatch(m)
		name := string(sm[1])
		seen[name] = true
		want, ok := blocks[name]
		if !ok {
			t.Errorf("%s: unknown example block %q", doc, name)
			return m
		}
		if got := string(sm[2]); got != want {
			drift = append(drift, name)
			t.Logf("%s: first difference (want: the doc, got: kseg's output):\n%s", name, clitest.FirstDiff(got, want))
		}
		return []byte("<!-- example:" + name + " -->\n```text\n" + want + "```\n<!-- end -->")
	})
	var missing []string
	for name := range blocks {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("%s has no example block for %v", doc, missing)
	}
	if len(drift) == 0 {
		return
	}
	if os.Getenv("KSEG_UPDATE_DOCS") == "1" && !bytes.Equal(updated, src) {
		testkit.WriteFile(t, doc, updated)
		t.Logf("updated %v in %s", drift, doc)
		return
	}
	t.Errorf("%s: example blocks %v differ from kseg's output; run KSEG_UPDATE_DOCS=1 go test ./cmd -run '^%s$'", doc, drift, t.Name())
}

// TestFailoverDocExamples regenerates the worked example of
// docs/failover.md from the barriertest fixture and fails when the
// document drifts from what kseg prints. KSEG_UPDATE_DOCS=1 rewrites the
// blocks. Paths are shown as /var/lib/kafka/data/mirror-0 and
// /srv/kseg-backups/mirror-0.
func TestFailoverDocExamples(t *testing.T) {
	const doc = "../docs/failover.md"
	if _, err := os.Stat(doc); err != nil {
		t.Skipf("%s: %v", doc, err)
	}
	const shownLogDir, shownBackup = "/var/lib/kafka/data", "/srv/kseg-backups/mirror-0"
	run := func(logDir, backup string, args ...string) string {
		t.Helper()
		code, out, stderr := clitest.Exec(t, args...)
		if code != ui.ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
		out = strings.ReplaceAll(out, logDir, shownLogDir)
		if backup != "" {
			out = strings.ReplaceAll(out, backup, shownBackup)
		}
		return out
	}
	newDir := func() (string, string) {
		logDir := filepath.Join(t.TempDir(), "data")
		return logDir, barriertest.WritePartition(t, logDir, barriertest.MirrorBatches(t), 400)
	}
	blocks := map[string]string{}
	logDir, dir := newDir()
	// The dry run as an operator's shell runs it: the plan names the
	// default backup folder under the home directory (a dry run creates
	// nothing there).
	{
		r := clitest.RunWith(func(s *ui.Streams) {
			s.Env = func(k string) (string, bool) { return "/home/operator", k == "HOME" }
		}, "inject-barrier", "--dry-run", "--timestamp", clitest.InjectTs, dir)
		if r.Code != ui.ExitOK {
			t.Fatalf("dry run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		blocks["dry-run"] = strings.ReplaceAll(r.Stdout, logDir, shownLogDir)
	}
	backup := filepath.Join(t.TempDir(), "backup")
	applied := run(logDir, backup, "inject-barrier", "--timestamp", clitest.InjectTs, "--backup-dir", backup, dir)
	// The plan is printed again first; show what follows it.
	if i := strings.Index(applied, "Backup:"); i >= 0 {
		applied = applied[i:]
	}
	blocks["apply"] = applied
	blocks["dump"] = run(logDir, "", "dump", "--deep", filepath.Join(dir, "00000000000000000006.log"))
	blocks["replay"] = run(logDir, "", "replay-psm", "--from-snapshot", "none", dir)
	logDir, dir = newDir()
	abort := run(logDir, "", "inject-barrier", "--dry-run", "--mode", "abort", "--bump-leader-epoch", "11", "--timestamp", clitest.InjectTs, dir)
	// The excerpt: from "Mode:" to "Files:".
	if i, j := strings.Index(abort, "Mode:"), strings.Index(abort, "Files:"); i >= 0 && j > i {
		abort = abort[i:j]
	}
	blocks["abort"] = abort

	checkDocBlocks(t, doc, blocks)
}
