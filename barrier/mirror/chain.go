package mirror

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// The relation VerifyEdge checks, for one mirror edge U → D (both partition
// directories of the same topic partition; barrier.md §9):
//
//	D = U[start, X)                   the mirrored region, byte for byte
//	    + ABORT markers (design 2)    D's STOPPING step, only if it failed over
//	    + MIRROR_PID_RESET at B       D's own barrier, only if it failed over
//	    + D's own writes from B+1     only after its barrier
//
// A D still mirroring has no barrier of its own and is a prefix of U.
// Barriers U holds are in U[start, X) and are mirrored like any batch.
// Failback is the same relation with the roles swapped, after the old
// source aligned its log by truncation.

// ChainOptions tune VerifyEdge and VerifyChain.
type ChainOptions struct {
	// StrictEpochs makes a partitionLeaderEpoch difference between a
	// mirrored batch and its upstream original an error. It is info by
	// default: partitionLeaderEpoch lies outside the CRC, and a mirror
	// that rewrites it still holds the same data.
	StrictEpochs bool
	// Progress, when set, is called with the bytes read as each edge's
	// walk reads both logs and as the downstream log is replayed (every
	// MiB or so): an edge reads its upstream's .log segments once and its
	// downstream's twice at most. The caller draws it.
	Progress func(n int64)
}

// Edge statuses.
const (
	// EdgeInSync: D holds exactly U's batches, to U's end.
	EdgeInSync = "in-sync"
	// EdgeLagging: D is a proper prefix of U, a mirror still catching up.
	EdgeLagging = "lagging"
	// EdgeFailedOver: D holds a prefix of U, then its own barrier (after
	// ABORT markers, in design 2), then only its own writes.
	EdgeFailedOver = "failed-over"
	// EdgeDiverged: none of the above; the findings say where and how.
	EdgeDiverged = "diverged"
)

// OffsetRange is [Start, End); empty when Start >= End.
type OffsetRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Len is the number of offsets in the range.
func (r OffsetRange) Len() int64 { return max(0, r.End-r.Start) }

func (r OffsetRange) String() string { return fmt.Sprintf("[%d, %d)", r.Start, r.End) }

// EdgeBarrier is D's own barrier.
type EdgeBarrier struct {
	Offset   int64
	File     string
	Position int64
	// Aborts are the offsets of the ABORT markers D wrote just before it
	// (design 2), empty in design 1.
	Aborts []int64
	// PartitionLeaderEpoch is the barrier's.
	PartitionLeaderEpoch int32
	// ProducersCleared is how many producers a replay of D drops at it.
	ProducersCleared int
}

// MirroredBarrier is a barrier of U found (byte for byte) in D's mirrored
// region, with what it clears in a replay of D.
type MirroredBarrier struct {
	Offset           int64
	ProducersCleared int
	Applied          bool
}

// AvertedAnomaly is a producer-state anomaly that a replay of D shows
// only when its barriers are ignored: what the barriers prevented.
type AvertedAnomaly struct {
	Kind       finding.Kind
	Offset     int64
	ProducerID int64
}

// EdgeReport is VerifyEdge's account of one edge. It, ChainReport,
// EdgeBarrier, MirroredBarrier and AvertedAnomaly carry no json tags:
// nothing marshals them, verify-chain's JSON lines are cmd/verifychain's
// EdgeJSON. (OffsetRange keeps its tags: a mirror Plan, recorded in the
// edit journal, holds two.)
type EdgeReport struct {
	Upstream   string
	Downstream string
	// UpstreamLog and DownstreamLog are each log's [log start, log end).
	UpstreamLog   OffsetRange
	DownstreamLog OffsetRange
	Status        string
	// Mirrored is the region where D's batches are U's, byte for byte.
	Mirrored        OffsetRange
	BatchesCompared int64
	// Barrier is D's own barrier; nil when D has none (still mirroring, or
	// diverged without one).
	Barrier *EdgeBarrier
	// Local is D's own writes after its barrier (empty without one).
	Local OffsetRange
	// Lag is U's end minus D's end for a mirror still catching up.
	Lag int64
	// MirroredBarriers are U's barriers in the mirrored region.
	MirroredBarriers []MirroredBarrier
	// ProducersReused are producer ids D holds on both sides of a barrier
	// (its own or a mirrored one): ids two clusters handed out
	// independently.
	ProducersReused []int64
	// CollisionsAverted counts the pid-collision anomalies a replay of D
	// reports only with its barriers ignored; Averted lists every anomaly
	// of that replay that the barriers prevent.
	CollisionsAverted int
	Averted           []AvertedAnomaly
	// InheritedAnomalies counts producer-state errors inside the mirrored
	// region: they are U's, copied as they are.
	InheritedAnomalies int
	// EpochDifferences counts mirrored batches whose partitionLeaderEpoch
	// differs from U's.
	EpochDifferences int64
	// Findings are the edge's (mismatch, missing-barrier, gap …; the
	// verify-chain rows of docs/troubleshooting.md) and the anomalies of
	// D's producer-state replay under their own kinds (pid-collision,
	// stale-snapshot …). File and Position locate the batch in D
	// (Position -1 when unknown, and for snapshot findings File is the
	// snapshot); UpstreamFile and UpstreamPosition locate U's batch at the
	// same offset when there is one.
	Findings []finding.Finding
}

// OK reports an edge without error findings.
func (r *EdgeReport) OK() bool { return !finding.HasErrors(r.Findings) }

// Errors counts the error findings.
func (r *EdgeReport) Errors() int { return finding.Errors(r.Findings) }

// ChainReport is VerifyChain's account of a topology.
type ChainReport struct {
	Dirs  []string
	Edges []*EdgeReport
}

// OK reports a topology whose every edge is OK.
func (r *ChainReport) OK() bool {
	for _, e := range r.Edges {
		if !e.OK() {
			return false
		}
	}
	return true
}

// VerifyChain checks each edge {u, d} (indexes into dirs) with VerifyEdge.
// Without edges it checks each consecutive pair: dirs[0]→dirs[1],
// dirs[1]→dirs[2], … (a chain). A dir may be a digest file (OpenNode).
func VerifyChain(dirs []string, edges [][2]int, opts ChainOptions) (*ChainReport, error) {
	nodes := make([]Node, len(dirs))
	defer func() {
		for _, n := range nodes {
			if n != nil {
				n.Close()
			}
		}
	}()
	for i, d := range dirs {
		n, err := OpenNode(d)
		if err != nil {
			return nil, err
		}
		nodes[i] = n
	}
	return VerifyChainNodes(nodes, edges, opts)
}

// VerifyChainNodes is VerifyChain over open nodes.
func VerifyChainNodes(nodes []Node, edges [][2]int, opts ChainOptions) (*ChainReport, error) {
	dirs := make([]string, len(nodes))
	for i, n := range nodes {
		dirs[i] = n.Name()
	}
	if len(dirs) < 2 {
		return nil, &edit.OptionError{Option: "edge", Detail: "a topology needs at least two partition directories"}
	}
	if len(edges) == 0 {
		for i := 0; i+1 < len(dirs); i++ {
			edges = append(edges, [2]int{i, i + 1})
		}
	}
	rep := &ChainReport{Dirs: dirs}
	for _, e := range edges {
		for _, i := range e {
			if i < 0 || i >= len(dirs) {
				return nil, &edit.OptionError{Option: "edge", Detail: fmt.Sprintf("directory %d is not among the %d given", i+1, len(dirs))}
			}
		}
		if e[0] == e[1] {
			return nil, &edit.OptionError{Option: "edge", Detail: fmt.Sprintf("%s mirrors itself", dirs[e[0]])}
		}
		r, err := VerifyEdgeNodes(nodes[e[0]], nodes[e[1]], opts)
		if err != nil {
			return nil, err
		}
		rep.Edges = append(rep.Edges, r)
	}
	return rep, nil
}

// VerifyEdge checks that downstream is a mirror of upstream (see the
// relation above): it streams both logs batch by batch in lockstep,
// classifies where and how D stops being U, checks D's own barrier, and
// replays D's producer state with and without its barriers. Either may be
// a digest file instead of a partition directory (OpenNode). Findings are
// in the report; the error is a *edit.RefusalError for a directory that is not
// a partition, a *digest.FormatError for a digest that cannot be read,
// else I/O.
func VerifyEdge(upstream, downstream string, opts ChainOptions) (*EdgeReport, error) {
	un, err := OpenNode(upstream)
	if err != nil {
		return nil, err
	}
	defer un.Close()
	dn, err := OpenNode(downstream)
	if err != nil {
		return nil, err
	}
	defer dn.Close()
	return VerifyEdgeNodes(un, dn, opts)
}

// VerifyEdgeNodes is VerifyEdge over open nodes: the same checks whether
// each is a partition directory or a digest of one.
func VerifyEdgeNodes(un, dn Node, opts ChainOptions) (*EdgeReport, error) {
	h := un.hashKind()
	if k := dn.hashKind(); h == 0 {
		h = k
	} else if k != 0 && k != h {
		return nil, fmt.Errorf("%s (%s) and %s (%s): %w", un.Name(), h, dn.Name(), k, ErrHashMismatch)
	}
	u, d, done, err := openLogs(un, dn)
	if err != nil {
		return nil, err
	}
	defer done()
	u.setProgress(opts.Progress)
	d.setProgress(opts.Progress)
	rep := &EdgeReport{Upstream: un.Name(), Downstream: dn.Name(), MirroredBarriers: []MirroredBarrier{}, ProducersReused: []int64{},
		Averted: []AvertedAnomaly{}, Findings: []finding.Finding{}}
	uEnd, err := un.logEnd()
	if err != nil {
		return nil, err
	}
	dEnd, err := dn.logEnd()
	if err != nil {
		return nil, err
	}
	rep.UpstreamLog = OffsetRange{Start: max(u.Start(), 0), End: max(uEnd, 0)}
	rep.DownstreamLog = OffsetRange{Start: max(d.Start(), 0), End: max(dEnd, 0)}
	w := &edgeWalk{opts: opts, rep: rep, un: un, dn: dn, u: u, d: d, h: h, pidEra: map[int64]int{}, reused: map[int64]bool{}, ownFrom: -1}
	rp := w.startReplays()
	if err := w.walkMapped(); err != nil {
		if rp != nil {
			rp.wg.Wait()
		}
		return nil, err
	}
	if err := w.producerState(rp); err != nil {
		return nil, err
	}
	for pid := range w.reused {
		rep.ProducersReused = append(rep.ProducersReused, pid)
	}
	slices.Sort(rep.ProducersReused)
	// D's segments whose offsets run into the next segment's: the walk
	// meets the next segment's batches as going backwards (reordered),
	// which says where, not why. (A digest holds no segment files.)
	if dn.Digest() == nil {
		overlaps, err := segment.SegmentOverlaps(dn.replayDir())
		if err != nil {
			return nil, err
		}
		for _, o := range overlaps {
			f := o.Finding()
			f.File = filepath.Base(o.Log)
			rep.Findings = append(rep.Findings, f)
		}
	}
	slices.SortStableFunc(rep.Findings, func(a, b finding.Finding) int { return cmp.Compare(a.Offset, b.Offset) })
	// An error says D is not what mirroring makes of U — but for an
	// invalid batch both hold byte for byte: that is damage copied, and
	// the edge keeps its status (the finding still fails it).
	if rep.Status == EdgeDiverged || slices.ContainsFunc(rep.Findings, func(f finding.Finding) bool {
		return f.Severity() == finding.Error && !(f.Kind == finding.CRCMismatch && f.Offset < rep.Mirrored.End)
	}) {
		rep.Status = EdgeDiverged
	}
	return rep, nil
}
