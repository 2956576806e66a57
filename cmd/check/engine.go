package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/kseg/kseg/cmd/check/tree"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/scan"
)

// What kseg check runs: the engines of the read commands, not checks of
// its own.
//
// Per partition directory:
//
//	segments        dump --verify-index --index-sanity-check [--deep]: batch
//	                structure and CRCs, offsets and leader epochs, the
//	                .index/.timeindex entries against the log, .txnindex,
//	                producer snapshots, checkpoints, partition.metadata
//	producer-state  replay-psm --check-snapshots: the producer-state replay's
//	                anomalies and every snapshot against the log
//	pending-edit    the journal of an interrupted kseg write
//
// Per log directory inside a PATH: checkpoints (the dump of its own
// files) and, where their internal topics are present, groups, txns and
// metadata. Per edge of the expectations file: chain (verify-chain).
//
// Each defect is reported once, by the check that locates it best:
// replay-psm meets a damaged tail or snapshot too (corrupt-log, zero-tail,
// snapshot-corrupt …) but knows only its offset, where dump gives the file
// and byte position, so producer-state leaves those kinds to segments
// (checkDumpKinds); a view or an edge repeating a partition's finding
// (same kind, same offset) is dropped for the same reason (dedupe).

// Check names, in the order a unit's cases are listed.
const (
	checkSegments      = "segments"
	checkProducerState = "producer-state"
	checkPendingEdit   = "pending-edit"
	checkCheckpoints   = "checkpoints"
	checkGroups        = "groups"
	checkTxns          = "txns"
	checkMetadata      = "metadata"
	checkChain         = "chain"
)

var checkOrder = []string{checkCheckpoints, checkGroups, checkTxns, checkMetadata,
	checkSegments, checkProducerState, checkPendingEdit, checkChain}

// checkCommand is the kseg command that reproduces a check's findings.
var checkCommand = map[string]string{
	checkSegments:      "kseg dump --verify-index --index-sanity-check",
	checkProducerState: "kseg replay-psm --check-snapshots",
	checkPendingEdit:   "kseg replay-psm",
	checkCheckpoints:   "kseg dump",
	checkGroups:        "kseg groups",
	checkTxns:          "kseg txns",
	checkMetadata:      "kseg metadata",
	checkChain:         "kseg verify-chain",
}

// checkDumpKinds are the kinds replay-psm reports about bytes dump locates
// (the file and byte position): segments reports them.
var checkDumpKinds = []finding.Kind{finding.CRCMismatch, finding.ZeroTail, finding.CorruptLog,
	finding.SnapshotCorrupt, finding.LogStartAboveLogEnd, finding.PendingEdit}

// checkCase is one check of one unit (a JUnit testcase): what it found,
// or why it could not run.
type checkCase struct {
	suite string // the log directory, as walked (the JUnit testsuite)
	unit  string // the partition or log directory, as walked
	abs   string // unit, absolute
	check string
	// upstream is a chain's upstream partition.
	upstream string
	findings []finding.Finding
	// err: the unit could not be read (a failing case; the rest still
	// run). skip: the check does not apply, and why.
	err     error
	skip    string
	elapsed time.Duration
}

// name is the case's name in reports: the unit and the check.
func (c *checkCase) name() string {
	if c.check == checkChain {
		return c.upstream + " -> " + c.unit + " " + c.check
	}
	return c.unit + " " + c.check
}

// checkEngine runs the checks with the options every unit shares.
type checkEngine struct {
	jobs int
	// deep reports whether a unit's records are decoded (--deep).
	deep      func(abs string) bool
	scanOpts  [2]*scan.Options // without and with --deep
	snapshots SnapshotCheck
	// unitDone, when set, is called after each unit (the progress line).
	unitDone func()
	// logDirs reads each log directory's checkpoints once for all its
	// partitions (segment.LogDirCache).
	logDirs *segment.LogDirCache
}

// newCheckEngine builds the engine's options as the commands' own flags
// build them, so that check runs exactly what they run.
func newCheckEngine(jobs int, deep func(string) bool, maxDecompressed int64, snapshots NewSnapshotCheck) (*checkEngine, error) {
	e := &checkEngine{jobs: ui.ResolveJobs(jobs), deep: deep, logDirs: segment.NewLogDirCache()}
	// One budget of decompressed bytes for every partition checked at once.
	budget := scan.NewBudget(maxDecompressed)
	if maxDecompressed <= 0 || maxDecompressed > math.MaxInt32 {
		return nil, ui.UsageErrorf("--max-decompressed-bytes must be between 1 and %d", math.MaxInt32)
	}
	// dump --verify-index --index-sanity-check [--deep]
	// (TestCheckRunsDumpsOptions holds them to dump's flags).
	for i, deep := range []bool{false, true} {
		o := scan.DefaultOptions()
		o.Deep, o.VerifyIndex, o.IndexSanityCheck = deep, true, true
		o.MaxDecompressed = maxDecompressed
		o.PartitionCheck = psm.CheckLogStart
		o.LogDirs, o.Budget = e.logDirs, budget
		e.scanOpts[i] = &o
	}
	var err error
	if e.snapshots, err = snapshots(e.logDirs); err != nil {
		return nil, err
	}
	return e, nil
}

// SnapshotCheck is the producer-state check check runs on each partition:
// replay-psm --check-snapshots --no-verify-crc (the engine's walk has
// checked every CRC by then), over the batches the walk recorded. Its
// Anomalies are what replay-psm reports of the partition; the warnings it
// prints (a log directory checkpoint that does not parse) are check's
// checkpoints findings, and are not among them.
type SnapshotCheck interface {
	Anomalies(pd *segment.PartitionDir, walk *psm.Walk) ([]finding.Finding, error)
}

// NewSnapshotCheck builds a run's SnapshotCheck, the log directories'
// checkpoints read once through logDirs.
type NewSnapshotCheck func(logDirs *segment.LogDirCache) (SnapshotCheck, error)

// checkUnit is one unit of work: a partition, a log directory or an edge.
type checkUnit struct {
	part *tree.Partition
	ld   *tree.LogDir
	edge *checkEdgeRun
	// walkErr is a directory the walk could not read: a failing case as
	// it is.
	walkErr *checkCase
	suite   string
}

// checkEdgeRun is an edge to verify: two partition directories.
type checkEdgeRun struct {
	up, down       string // as given (joined with the config's directory)
	downAbs, suite string
}

// run checks every unit on e.jobs workers and returns the cases in a
// stable order: by suite, unit, then check.
func (e *checkEngine) run(ctx context.Context, units []checkUnit) []checkCase {
	out := make([][]checkCase, len(units))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(e.jobs, max(len(units), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One walk per worker, its memory reused from partition to
			// partition.
			walk := psm.NewWalk()
			for i := range next {
				if ctx.Err() == nil {
					out[i] = e.runUnit(ctx, units[i], walk)
				}
				if e.unitDone != nil {
					e.unitDone()
				}
			}
		}()
	}
	for i := range units {
		next <- i
	}
	close(next)
	wg.Wait()
	var cases []checkCase
	for _, cs := range out {
		cases = append(cases, cs...)
	}
	slices.SortStableFunc(cases, func(a, b checkCase) int {
		if c := strings.Compare(a.suite, b.suite); c != 0 {
			return c
		}
		if c := strings.Compare(a.unit, b.unit); c != 0 {
			return c
		}
		return slices.Index(checkOrder, a.check) - slices.Index(checkOrder, b.check)
	})
	dedupe(cases)
	return cases
}

func (e *checkEngine) runUnit(ctx context.Context, u checkUnit, walk *psm.Walk) []checkCase {
	var cs []checkCase
	switch {
	case u.part != nil:
		cs = e.partition(ctx, u.part, walk)
	case u.ld != nil:
		cs = e.logDir(ctx, u.ld)
	case u.walkErr != nil:
		cs = []checkCase{*u.walkErr}
	default:
		cs = []checkCase{e.chain(u.edge)}
	}
	for i := range cs {
		if cs[i].suite == "" {
			cs[i].suite = u.suite
		}
	}
	return cs
}

// timed runs fn and records how long it took.
func timed(c *checkCase, fn func()) {
	start := time.Now()
	fn()
	c.elapsed = time.Since(start)
}

// partition runs the three checks of one partition directory.
func (e *checkEngine) partition(ctx context.Context, p *tree.Partition, walk *psm.Walk) []checkCase {
	seg := checkCase{unit: p.Path, abs: p.Abs, check: checkSegments}
	ps := checkCase{unit: p.Path, abs: p.Abs, check: checkProducerState}
	pe := checkCase{unit: p.Path, abs: p.Abs, check: checkPendingEdit}
	// The directory is listed once, for every check.
	var pd *segment.PartitionDir
	timed(&seg, func() {
		var err error
		if pd, err = e.logDirs.OpenPartitionDir(p.Path); err != nil {
			seg.err = err
			return
		}
		seg.findings, seg.err = e.dumpFiles(ctx, scan.PartitionFiles(pd), e.deep(p.Abs), walk, pd)
	})
	if seg.err != nil {
		why := "not run: the partition could not be read"
		ps.skip, pe.skip = why, why
		return []checkCase{seg, ps, pe}
	}
	// The journal is pending-edit's; dump meets it as a file too.
	seg.findings = slices.DeleteFunc(seg.findings, func(f finding.Finding) bool { return f.Kind == finding.PendingEdit })
	timed(&ps, func() { e.producerState(&ps, pd, walk) })
	timed(&pe, func() {
		if f, ok := edit.PendingFinding(p.Path); ok {
			f.PartitionDir = p.Path
			pe.findings = append(pe.findings, f)
		}
	})
	return []checkCase{seg, ps, pe}
}

// dumpFiles runs dump's engine over files with a printer that keeps the
// findings. A partition holding a large log gets dump's CRC pipeline
// (scan.Options.UnitWorkers); the others are read serially, the parallelism being
// across partitions. An I/O error is returned after the other files.
func (e *checkEngine) dumpFiles(ctx context.Context, files []scan.File, deep bool, walk *psm.Walk, pd *segment.PartitionDir) ([]finding.Finding, error) {
	o := e.scanOpts[0]
	if deep {
		o = e.scanOpts[1]
	}
	p := &findingsPrinter{}
	// With a walk, the indexes are verified in the walk that reads their
	// log too (segment/scan/walkverify.go): one read of each partition.
	opts := *o
	opts.VerifyIndexesInWalk = walk != nil
	st := scan.NewRun(p, &opts, o.UnitWorkers(files), false)
	defer st.Close()
	if walk != nil {
		st.Observer = newCheckWalk(walk)
	}
	if pd != nil {
		st.Listed(pd)
	}
	var errs bytes.Buffer
	st.FileError = func(err error) { fmt.Fprintf(&errs, "kseg: %v\n", err) }
	ioErr, err := st.Files(ctx, files, 0)
	if err == nil && ioErr != nil {
		err = errors.New(strings.TrimSpace(strings.ReplaceAll(errs.String(), "kseg: ", "")))
	}
	return p.findings, err
}

// producerState replays the partition as replay-psm --check-snapshots
// does (SnapshotCheck), without the kinds segments reports.
func (e *checkEngine) producerState(c *checkCase, pd *segment.PartitionDir, walk *psm.Walk) {
	if !inputs.HasLogSegment(pd) {
		c.skip = "no .log segment: no producer state"
		return
	}
	anomalies, err := e.snapshots.Anomalies(pd, walk)
	if err != nil {
		c.err = err
		return
	}
	for _, f := range anomalies {
		if slices.Contains(checkDumpKinds, f.Kind) {
			continue
		}
		f.PartitionDir = pd.Path
		if f.File == "" {
			f.File = locateOffset(pd, f)
		}
		c.findings = append(c.findings, f)
	}
}

// locateOffset is the file a producer-state finding is about, which
// replay-psm gives by offset only: the snapshot at the offset for a
// snapshot's finding, else the segment holding the offset.
func locateOffset(pd *segment.PartitionDir, f finding.Finding) string {
	if f.Offset < 0 {
		return ""
	}
	switch f.Kind {
	case finding.SnapshotMismatch, finding.StaleSnapshot, finding.SnapshotIgnored, finding.SnapshotAboveLogEnd:
		for _, s := range pd.Snapshots {
			if s.Offset == f.Offset {
				return s.Path
			}
		}
	}
	file := ""
	for _, s := range pd.Segments {
		if s.Log != "" && s.BaseOffset <= f.Offset {
			file = s.Log
		}
	}
	return file
}

// logDir runs a log directory's checks: its own files, and the views its
// internal topics call for.
func (e *checkEngine) logDir(ctx context.Context, ld *tree.LogDir) []checkCase {
	cp := checkCase{unit: ld.Path, abs: ld.Abs, check: checkCheckpoints}
	timed(&cp, func() {
		l, err := segment.OpenLogDir(ld.Path)
		if err != nil {
			cp.err = err
			return
		}
		var files []scan.File
		for _, f := range l.Files {
			if fi, _ := segment.ParseFileName(filepath.Base(f.Path)); fi.Kind != segment.KindLock && fi.Kind != segment.KindUnknown {
				files = append(files, scan.File{Path: f.Path, Info: fi})
			}
		}
		if len(files) == 0 {
			cp.skip = "none" // a folder of partitions, not a broker's log directory
			return
		}
		cp.findings, cp.err = e.dumpFiles(ctx, files, false, nil, nil)
	})
	var cases []checkCase
	if cp.skip != "none" {
		cases = append(cases, cp)
	}
	views := []struct {
		check, topic string
		load         func(*cluster.Inventory) ([]finding.Finding, error)
	}{
		{checkGroups, cluster.ConsumerOffsetsTopic, func(inv *cluster.Inventory) ([]finding.Finding, error) {
			v, err := cluster.LoadGroups(inv, brokerview.Decoder(), cluster.GroupsOptions{Jobs: 1, PSM: psm.DefaultOptions()})
			if err != nil {
				return nil, err
			}
			return v.Findings, nil
		}},
		{checkTxns, cluster.TransactionStateTopic, func(inv *cluster.Inventory) ([]finding.Finding, error) {
			o := cluster.DefaultTxnsOptions()
			o.Jobs = 1
			v, err := cluster.LoadTxns(inv, brokerview.Decoder(), o)
			if err != nil {
				return nil, err
			}
			return v.Findings, nil
		}},
		{checkMetadata, cluster.ClusterMetadataTopic, func(inv *cluster.Inventory) ([]finding.Finding, error) {
			v, err := cluster.LoadMetadata(inv, cluster.MetadataOptions{At: -1})
			if err != nil {
				return nil, err
			}
			return v.Findings, nil
		}},
	}
	var inv *cluster.Inventory
	var invErr error
	for _, v := range views {
		if !ld.Topics[v.topic] {
			continue
		}
		c := checkCase{unit: ld.Path, abs: ld.Abs, check: v.check}
		timed(&c, func() {
			if inv == nil && invErr == nil {
				inv, invErr = cluster.OpenInventory([]string{ld.Path})
			}
			if invErr != nil {
				c.err = invErr
				return
			}
			fs, err := v.load(inv)
			c.findings, c.err = fs, err
		})
		cases = append(cases, c)
	}
	return cases
}

// chain verifies one edge, as verify-chain does (mirror.VerifyChain).
func (e *checkEngine) chain(ed *checkEdgeRun) checkCase {
	c := checkCase{unit: ed.down, abs: ed.downAbs, check: checkChain, upstream: ed.up}
	timed(&c, func() {
		var nodes []mirror.Node
		defer func() {
			for _, n := range nodes {
				n.Close()
			}
		}()
		for _, p := range []string{ed.up, ed.down} {
			n, err := mirror.OpenNode(p)
			if err != nil {
				c.err = err
				return
			}
			nodes = append(nodes, n)
		}
		if err := chainnode.CheckSamePartition(nodes[0], nodes[1]); err != nil {
			c.err = err
			return
		}
		rep, err := mirror.VerifyChainNodes(nodes, nil, mirror.ChainOptions{})
		if err != nil {
			c.err = err
			return
		}
		// verify-chain names files by their base name in their partition.
		in := func(dir, name string) string {
			if name == "" || strings.ContainsRune(name, filepath.Separator) {
				return name
			}
			return filepath.Join(dir, name)
		}
		for _, er := range rep.Edges {
			for _, f := range er.Findings {
				f.PartitionDir = ed.down
				f.File, f.UpstreamFile = in(ed.down, f.File), in(ed.up, f.UpstreamFile)
				c.findings = append(c.findings, f)
			}
		}
	})
	return c
}

// dedupe drops, from the views and the chain checks, a finding a
// partition's own checks already made (same partition, kind and offset):
// theirs locate it by file and byte position.
func dedupe(cases []checkCase) {
	type key struct {
		dir    string
		kind   finding.Kind
		offset int64
	}
	seen := map[key]bool{}
	own := func(c *checkCase) bool {
		return c.check == checkSegments || c.check == checkProducerState || c.check == checkPendingEdit
	}
	for i := range cases {
		if c := &cases[i]; own(c) {
			for _, f := range c.findings {
				if f.Offset >= 0 {
					seen[key{c.abs, f.Kind, f.Offset}] = true
				}
			}
		}
	}
	for i := range cases {
		c := &cases[i]
		if own(c) {
			continue
		}
		c.findings = slices.DeleteFunc(c.findings, func(f finding.Finding) bool {
			if f.Offset < 0 || f.PartitionDir == "" {
				return false
			}
			abs, err := filepath.Abs(f.PartitionDir)
			return err == nil && seen[key{abs, f.Kind, f.Offset}]
		})
	}
}

// findingsPrinter is the scan.Printer of kseg check: it renders nothing
// and keeps the findings.
type findingsPrinter struct {
	scan.Discard
	findings []finding.Finding
}

func (p *findingsPrinter) Finding(fd finding.Finding) { p.findings = append(p.findings, fd) }
