package oracle

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/kafkaoracle"
)

// scenario is one write command run on a staged copy of a partition,
// after an optional damage.
type scenario struct {
	name string
	// damage changes the staged partition before the command; false when
	// the partition has nothing it applies to.
	damage func(dir string) (bool, error)
	// args are the command's arguments for the partition dir (src is the
	// pristine staged copy; out is where a mirror writes), a backup
	// directory and the barrier timestamp.
	args func(dir, out, backup string, ts int64) [][]string
	// mirror: the output is out, not dir.
	mirror bool
	// recovery: the command does what LogLoader's recovery does, so every
	// index file it writes must be byte for byte what Kafka's recovery
	// writes (judged by the unclean load, which recovers every segment).
	recovery bool
}

var scenarios = []scenario{
	{name: "inject-barrier truncate", args: func(dir, _, backup string, ts int64) [][]string {
		return [][]string{{"inject-barrier", "--mode", "truncate", "--yes", "--timestamp", strconv.FormatInt(ts, 10), "--backup-dir", backup, dir}}
	}},
	{name: "inject-barrier abort", args: func(dir, _, backup string, ts int64) [][]string {
		return [][]string{{"inject-barrier", "--mode", "abort", "--timestamp", strconv.FormatInt(ts, 10), "--backup-dir", backup, dir}}
	}},
	{name: "mirror", mirror: true, args: func(dir, out, backup string, _ int64) [][]string {
		return [][]string{{"mirror", "--backup-dir", backup, dir, out}}
	}},
	{name: "mirror in two steps", mirror: true, args: func(dir, out, backup string, _ int64) [][]string {
		return [][]string{{"mirror", "--backup-dir", backup, "--upto", "MID", dir, out}, {"mirror", "--backup-dir", backup + "2", dir, out}}
	}},
	{name: "repair --all", args: repairArgs("--all"), recovery: true},
	{name: "repair torn tail", damage: tearTail, args: repairArgs(), recovery: true},
	{name: "repair corrupt .index", damage: corruptIndex, args: repairArgs(), recovery: true},
	{name: "repair truncated .timeindex", damage: truncateTimeIndex, args: repairArgs(), recovery: true},
	{name: "repair deleted .txnindex", damage: deleteTxnIndex, args: repairArgs(), recovery: true},
	{name: "repair overlapping segments", damage: overlapSegments, args: repairArgs(), recovery: true},
	{name: "inject-barrier --repair-tail", damage: tearTail, args: func(dir, _, backup string, ts int64) [][]string {
		return [][]string{{"inject-barrier", "--repair-tail", "--yes", "--timestamp", strconv.FormatInt(ts, 10), "--backup-dir", backup, dir}}
	}},
}

func repairArgs(extra ...string) func(dir, out, backup string, ts int64) [][]string {
	return func(dir, _, backup string, _ int64) [][]string {
		return [][]string{append(append([]string{"repair", "--backup-dir", backup}, extra...), dir)}
	}
}

// lastSegment is the last segment with a .log.
func lastSegment(dir string) (segment.SegmentFiles, bool, error) {
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return segment.SegmentFiles{}, false, err
	}
	for i := len(pd.Segments) - 1; i >= 0; i-- {
		if pd.Segments[i].Log != "" {
			return pd.Segments[i], true, nil
		}
	}
	return segment.SegmentFiles{}, false, nil
}

// tearTail cuts the last batch of the last segment in its middle, as a
// crash during an append leaves it.
func tearTail(dir string) (bool, error) {
	seg, ok, err := lastSegment(dir)
	if err != nil || !ok {
		return false, err
	}
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return false, err
	}
	sc := lf.Scanner(segment.ScanOptions{})
	pos, size := int64(-1), int64(0)
	for sc.Next() {
		pos, size = sc.Pos(), sc.Batch().Size()
	}
	sc.Close()
	lf.Close()
	if pos < 0 {
		return false, nil
	}
	return true, os.Truncate(seg.Log, pos+size/2)
}

// corruptIndex points the first entry of the last non-empty .index past
// the end of its log.
func corruptIndex(dir string) (bool, error) {
	return damageLast(dir, func(s segment.SegmentFiles) string { return s.Index }, func(p string, b []byte) error {
		if len(b) < 8 {
			return errSkip
		}
		binary.BigEndian.PutUint32(b[4:8], 1<<30)
		return os.WriteFile(p, b, 0o644)
	})
}

// truncateTimeIndex cuts the last 5 bytes of the last non-empty .timeindex.
func truncateTimeIndex(dir string) (bool, error) {
	return damageLast(dir, func(s segment.SegmentFiles) string { return s.TimeIndex }, func(p string, b []byte) error {
		if len(b) < 12 {
			return errSkip
		}
		return os.Truncate(p, int64(len(b)-5))
	})
}

// deleteTxnIndex deletes the last non-empty .txnindex.
func deleteTxnIndex(dir string) (bool, error) {
	return damageLast(dir, func(s segment.SegmentFiles) string { return s.TxnIndex }, func(p string, b []byte) error {
		if len(b) == 0 {
			return errSkip
		}
		return os.Remove(p)
	})
}

var errSkip = fmt.Errorf("nothing to damage")

// overlapSegments appends the last segment's batches to the segment
// before it, as a write through a hard link into a copy seeded with cp -al
// left it (issue 28, item 4): the two segments then overlap.
func overlapSegments(dir string) (bool, error) {
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return false, err
	}
	var logs []string
	for _, s := range pd.Segments {
		if s.Log != "" {
			logs = append(logs, s.Log)
		}
	}
	if len(logs) < 2 {
		return false, nil
	}
	last, err := os.ReadFile(logs[len(logs)-1])
	if err != nil || len(last) == 0 {
		return false, err
	}
	f, err := os.OpenFile(logs[len(logs)-2], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return false, err
	}
	if _, err := f.Write(last); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}

// damageLast applies f to the file pick names, in the last segment where f
// finds something to damage.
func damageLast(dir string, pick func(segment.SegmentFiles) string, f func(path string, content []byte) error) (bool, error) {
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return false, err
	}
	for i := len(pd.Segments) - 1; i >= 0; i-- {
		p := pick(pd.Segments[i])
		if p == "" || pd.Segments[i].Log == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return false, err
		}
		switch err := f(p, b); err {
		case nil:
			return true, nil
		case errSkip:
		default:
			return false, err
		}
	}
	return false, nil
}

// outputDifferences are the outputs Kafka's load changes though the
// command did what a broker does, each with the reason (docs/psm.md,
// "Where kseg and a broker may differ"), keyed by partition and scenario.
var outputDifferences = func() map[string]string {
	m := map[string]string{}
	// A topic that went back from message format v2 to v1: mirror appends
	// as a follower does (UnifiedLog.append clears the leader epoch cache
	// on a batch below magic 2, so the destination's checkpoint is
	// emptied by the second run's v1 batches), while LogSegment.recover
	// only ever assigns epochs and never clears them: a broker that
	// recovers the copy records epoch 0 from the first v2 batch again.
	for _, p := range []string{"v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc/test-88-0", "v2b-v1/test-feisty-0", "v2bc-v1/test-hardy-0", "v2bc-v1c/test-karmic-0"} {
		m["real/segmentio__kafka-go/"+p+"|mirror in two steps"] = "the append path clears leader epochs at a v1 batch, recovery does not"
	}
	return m
}()

// output is one write command's output, judged by two loads: as the log
// directory says (broker), and after an unclean shutdown on a copy.
type output struct {
	p        partition
	scenario string
	recovery bool
	dir      string
	// written are the files the command created or changed.
	written map[string]bool
	state   *kafkaoracle.State
	clock   int64
	barrier bool
	// pristine is the partition before any damage, staged for the
	// pristine broker load.
	pristine string
	unclean  string
	notes    []string
	err      string
}

// TestWriteOutputsLoadInKafka: every output of every write command —
// inject-barrier in both modes, mirror in one and two steps, repair --all
// and repair after each kind of damage, inject-barrier --repair-tail —
// loads in Kafka's LogLoader: the load throws nothing, a load after an
// unclean shutdown (every segment recovered) changes no .log, a load as
// the log directory says changes nothing the command should have left as
// the broker would (a file it wrote, a file the broker deletes, a segment
// file the broker adds), and the producer state is replay-psm's on the
// output (--ignore-barriers where kseg wrote a barrier, which upstream
// Kafka does not know).
func TestWriteOutputsLoadInKafka(t *testing.T) {
	o := kafkaoracle.Find(t)
	parts := sweepSet(t, partitions(t))
	work := t.TempDir()
	t0 := time.Now()
	var mu sync.Mutex
	var outs []*output
	skipped := map[string]int{}
	parallel(t, len(parts), func(i int) string { return parts[i].name }, func(t *testing.T, i int) {
		p := parts[i]
		base := filepath.Join(work, strconv.Itoa(i))
		pristine, err := kafkaoracle.Stage(p.path, filepath.Join(base, "pristine"))
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			return
		}
		_, clock, _ := replay(t, pristine)
		ts := max(clock, 1_700_000_000_000) + 1000
		for k, sc := range scenarios {
			out := &output{p: p, scenario: sc.name, recovery: sc.recovery, pristine: pristine}
			if why := runScenario(t, sc, p, filepath.Join(base, strconv.Itoa(k)), ts, out); why != "" {
				mu.Lock()
				skipped[sc.name+": "+why]++
				mu.Unlock()
				continue
			}
			mu.Lock()
			outs = append(outs, out)
			mu.Unlock()
		}
	})
	var reqs []kafkaoracle.Request
	pristineDone := map[string]bool{}
	for _, out := range outs {
		if out.err != "" {
			continue
		}
		cfg := out.p.config()
		reqs = append(reqs,
			kafkaoracle.Request{Dir: out.dir, Mode: kafkaoracle.Broker, NowMs: out.clock, Extra: cfg},
			kafkaoracle.Request{Dir: out.unclean, Mode: kafkaoracle.Unclean, NowMs: out.clock, Extra: cfg})
		if !pristineDone[out.pristine] {
			pristineDone[out.pristine] = true
			reqs = append(reqs, kafkaoracle.Request{Dir: out.pristine, Mode: kafkaoracle.Broker, Extra: cfg})
		}
	}
	t1 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), kafkaoracle.Timeout)
	defer cancel()
	loads, err := o.Run(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("commands %v, %d loads in Kafka %v", t1.Sub(t0).Round(time.Millisecond), len(reqs), time.Since(t1).Round(time.Millisecond))
	byDir := map[string]*kafkaoracle.Load{}
	for i := range loads {
		byDir[loads[i].Request.Dir] = &loads[i]
	}
	judged, agree, known := 0, 0, 0
	for _, out := range outs {
		if out.err != "" {
			t.Errorf("%s, %s: %s", out.p.name, out.scenario, out.err)
			continue
		}
		judged++
		problems := judge(out, byDir[out.dir], byDir[out.unclean], byDir[out.pristine])
		reason, isKnown := outputDifferences[out.p.name+"|"+out.scenario]
		switch {
		case isKnown && len(problems) == 0:
			t.Errorf("%s, %s: loads in Kafka unchanged now; remove it from outputDifferences (%s)", out.p.name, out.scenario, reason)
		case isKnown:
			known++
		case len(problems) > 0:
			t.Errorf("%s, %s (%s):\n  %s", out.p.name, out.scenario, out.dir, strings.Join(problems, "\n  "))
		default:
			agree++
		}
	}
	var why []string
	for k, n := range skipped {
		why = append(why, fmt.Sprintf("%s (%d)", k, n))
	}
	sort.Strings(why)
	t.Logf("%d outputs of %d partitions judged: %d load in Kafka unchanged with replay-psm's state, %d known differences; not run: %s", judged, len(parts), agree, known, strings.Join(why, "; "))
}

// runScenario stages p under base, damages it, runs the command and fills
// out; a non-empty return says why the scenario does not apply.
func runScenario(t *testing.T, sc scenario, p partition, base string, ts int64, out *output) string {
	dir, err := kafkaoracle.Stage(p.path, filepath.Join(base, "in"))
	if err != nil {
		out.err = err.Error()
		return ""
	}
	if sc.damage != nil {
		ok, err := sc.damage(dir)
		if err != nil {
			out.err = "damage: " + err.Error()
			return ""
		}
		if !ok {
			return "nothing to damage"
		}
	}
	before := hashes(t, dir)
	target := dir
	mirrorOut := filepath.Join(base, "mirror", filepath.Base(filepath.Dir(dir)), filepath.Base(dir))
	if sc.mirror {
		target = mirrorOut
		before = map[string]string{}
		if err := os.MkdirAll(filepath.Dir(mirrorOut), 0o755); err != nil {
			out.err = err.Error()
			return ""
		}
	}
	for _, args := range sc.args(dir, mirrorOut, filepath.Join(base, "backup"), ts) {
		if i := slices.Index(args, "MID"); i >= 0 {
			st, _, _ := replay(t, dir)
			if st == nil || st.LogEndOffset-st.LogStartOffset < 2 {
				return "too short to mirror in two steps"
			}
			args[i] = strconv.FormatInt((st.LogStartOffset+st.LogEndOffset)/2, 10)
		}
		// The topic's index.interval.bytes, as the operator passes it.
		args = slices.Insert(args, 1, p.flags()...)
		r := clitest.Run(args...)
		if r.Code != 0 {
			why, _, _ := strings.Cut(firstLine(r.Stderr+r.Stdout), base)
			return fmt.Sprintf("exit %d: %s", r.Code, why)
		}
	}
	if _, err := os.Stat(target); err != nil {
		return "nothing written (an empty source)"
	}
	out.dir = target
	out.written = map[string]bool{}
	for name, h := range hashes(t, target) {
		if before[name] != h {
			out.written[name] = true
		}
	}
	var r clitest.Result
	out.state, out.clock, r = replay(t, target)
	if out.state == nil {
		out.err = fmt.Sprintf("replay-psm: exit %d: %s", r.Code, r.Stderr)
		return ""
	}
	if strings.Contains(r.Stdout, `"barriers":[{`) {
		out.barrier = true
		r = clitest.Run("replay-psm", "-q", "-o", "json", "--ignore-barriers", "--clock", strconv.FormatInt(out.clock, 10), target)
		if out.state, err = kafkaoracle.ParseState([]byte(r.Stdout)); err != nil {
			out.err = fmt.Sprintf("replay-psm --ignore-barriers: exit %d: %s", r.Code, r.Stderr)
			return ""
		}
	}
	if out.unclean, err = kafkaoracle.Stage(target, filepath.Join(base, "unclean")); err != nil {
		out.err = err.Error()
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// judge lists what is wrong with an output, given its broker load, its
// unclean load and the broker load of the partition it came from.
func judge(out *output, broker, unclean, pristine *kafkaoracle.Load) []string {
	var d []string
	if broker == nil || unclean == nil || pristine == nil {
		return []string{"no load"}
	}
	for _, l := range []*kafkaoracle.Load{broker, unclean} {
		if e := l.Failed(); e != nil {
			d = append(d, fmt.Sprintf("mode %s: Kafka's load threw %s\n    %s", l.Inputs.Mode, e, strings.Join(e.Stack, "\n    ")))
		}
	}
	for _, c := range unclean.FileChanges {
		switch {
		case strings.HasSuffix(c.File, segment.LogSuffix):
			d = append(d, fmt.Sprintf("an unclean start's recovery %s (it cuts or deletes what does not frame valid batches)", c))
		case out.recovery && out.written[c.File] && isIndex(c.File):
			d = append(d, fmt.Sprintf("an unclean start's recovery %s, which the command rebuilt: it is not what LogSegment.recover writes", c))
		}
	}
	before := map[string]string{}
	for _, c := range pristine.FileChanges {
		before[c.File] = c.Change
	}
	for _, c := range broker.FileChanges {
		snapshot := strings.HasSuffix(c.File, segment.SnapshotSuffix)
		switch {
		case strings.HasSuffix(c.File, segment.LogSuffix):
			d = append(d, fmt.Sprintf("the broker's load %s", c))
		case c.Change == "removed" && (out.written[c.File] || before[c.File] != "removed"):
			d = append(d, fmt.Sprintf("the broker's load %s: the command left a file the broker deletes", c))
		case snapshot:
			// Recovery writes snapshots of its own; their content is
			// judged by the producer state below.
		case out.written[c.File] && (out.recovery || before[c.File] != c.Change):
			// An appending command keeps the broker's entries before its
			// own; a broker that recovers the partition rewrites both.
			d = append(d, fmt.Sprintf("the broker's load %s, which the command wrote: it is not what Kafka writes", c))
		case before[c.File] != c.Change:
			d = append(d, fmt.Sprintf("the broker's load %s (it does not on the partition before the command)", c))
		}
	}
	if broker.Failed() == nil {
		for _, x := range kafkaoracle.Diff(out.state, broker) {
			what := "replay-psm"
			if out.barrier {
				what = "replay-psm --ignore-barriers"
			}
			d = append(d, fmt.Sprintf("%s differs from Kafka's load: %s", what, x))
		}
	}
	return d
}

// isIndex: an .index, .timeindex or .txnindex.
func isIndex(name string) bool {
	return strings.HasSuffix(name, segment.IndexSuffix) || strings.HasSuffix(name, segment.TimeIndexSuffix) || strings.HasSuffix(name, segment.TxnIndexSuffix)
}

// sweepSet is where the write-command sweep runs: every partition with
// KSEG_ORACLE_SWEEP=all (.ci/run runs it so: 192 partitions, some 1,500
// outputs), else the partitions that cover what it has found, so that go
// test ./... stays quick (every write command fsyncs what it writes).
func sweepSet(t *testing.T, all []partition) []partition {
	if os.Getenv("KSEG_ORACLE_SWEEP") == "all" {
		return all
	}
	var out []partition
	for _, p := range all {
		if slices.Contains(sweepDefault, p.name) {
			out = append(out, p)
		}
	}
	if len(out) != len(sweepDefault) {
		t.Logf("%d of the %d default partitions of the sweep are here (the real fixtures may be absent)", len(out), len(sweepDefault))
	}
	return out
}

// sweepDefault are the partitions the sweep runs over by default, and
// what each covers.
var sweepDefault = []string{
	"testdata/partitions/orders-0",                            // segments, snapshots at rolls and at the end, every codec
	"testdata/partitions/txn-0",                               // aborted transactions in .txnindex, one left open
	"testdata/partitions/control-0",                           // barriers: --ignore-barriers against Kafka
	"testdata/logdirs/broker-1/orders-0",                      // a log start moved by retention, an unclean start
	"shaped/clean/deleterecords-0",                            // a log start inside a transaction (items 2, 3)
	"shaped/clean/follower-0",                                 // a follower's indexes (item 6)
	"shaped/crashed/span-0",                                   // transactions over segments, recovery from a recovery point
	"shaped/crashed/bump-0",                                   // epoch bumps: timeout abort, transaction version 2
	"shaped/crashed/retention-0",                              // the checkpointed log start below the first segment (item 5)
	"real/sagarrao1__kafka/MultiNode/kafka-logs-1/my_topic-3", // a broker's stray snapshot (item 4)
	"real/devandref__apache-kafka-eda-study/data/product-created-events-topic-2",                                               // a broker's time index after an unclean shutdown
	"real/segmentio__kafka-go/v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc/test-88-0",                                               // message formats v1 and v2 mixed
	"real/ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0", // a real transaction and its snapshot
}
