// Package verifychain is kseg verify-chain: the edges of a mirror chain
// (source, mirror, mirror of the mirror …) checked batch by batch, with
// the barriers each mirror needs and the collisions they avert.
package verifychain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/edit"
)

// verifyChainOptions are the flags of `kseg verify-chain`.
type verifyChainOptions struct {
	edges        []string
	strictEpochs bool
	output       string

	// derived by Validate
	pairs [][2]int
	dirs  []string // the DIR arguments, then the directories --edge added
}

func (o *verifyChainOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringArrayVar(&o.edges, "edge", nil, "an edge U=D of the topology: D mirrors U; U and D are DIR arguments, by position (1-based) or as given (repeatable; default: each DIR mirrors the one before it)")
	f.BoolVar(&o.strictEpochs, "strict-epochs", false, "a partitionLeaderEpoch that differs between a mirrored batch and its original is an error (info by default)")
	ui.AddOutputFlag(c, &o.output)
}

// endpoint resolves one side of an --edge: a 1-based position among dirs,
// or one of dirs (compared as cleaned absolute paths).
func endpoint(s string, dirs []string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(dirs) {
		return n - 1, true
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return filepath.Clean(p)
		}
		return a
	}
	want := abs(s)
	for i, d := range dirs {
		if abs(d) == want {
			return i, true
		}
	}
	return -1, false
}

// Validate checks the flags and finds the partition directories (dirs):
// the DIR arguments, then any directory an --edge names that is not among
// them (so --edge A=B --edge A=C needs no DIR arguments at all).
func (o *verifyChainOptions) Validate(_ *cobra.Command, args []string) error {
	if err := ui.ValidateOutput(o.output); err != nil {
		return err
	}
	dirs := append([]string(nil), args...)
	for _, e := range o.edges {
		u, d, ok := o.resolveEdge(e, &dirs)
		if !ok {
			return ui.UsageErrorf("--edge %q: want U=D, each a DIR argument given by position (1..%d), or a partition directory", e, len(args))
		}
		if u == d {
			return ui.UsageErrorf("--edge %s: a partition does not mirror itself", e)
		}
		o.pairs = append(o.pairs, [2]int{u, d})
	}
	if len(dirs) < 2 {
		return ui.UsageErrorf("verify-chain needs at least two partition directories (as DIR arguments or in --edge U=D)")
	}
	// The same directory twice is the --edge 1=1 mistake made by position.
	stdin := 0
	for i := range dirs {
		if dirs[i] == "-" {
			if stdin++; stdin > 1 {
				return ui.UsageErrorf("- (a digest on stdin) is given twice: stdin holds one digest")
			}
			continue
		}
		for j := i + 1; j < len(dirs); j++ {
			if chainnode.SameDir(dirs[i], dirs[j]) {
				return ui.UsageErrorf("%s and %s are the same directory: a partition does not mirror itself", dirs[i], dirs[j])
			}
		}
	}
	o.dirs = dirs
	return nil
}

// resolveEdge splits an --edge U=D (a path may hold '=': every split is
// tried) into indexes of *dirs: a 1-based position among the DIR
// arguments, one of them as given, or else a directory that exists, which
// is appended to *dirs.
func (o *verifyChainOptions) resolveEdge(e string, dirs *[]string) (int, int, bool) {
	var splits [][2]string
	for i := strings.Index(e, "="); i >= 0; {
		splits = append(splits, [2]string{e[:i], e[i+1:]})
		j := strings.Index(e[i+1:], "=")
		if j < 0 {
			break
		}
		i += j + 1
	}
	for _, sp := range splits {
		u, okU := endpoint(sp[0], *dirs)
		d, okD := endpoint(sp[1], *dirs)
		if okU && okD {
			return u, d, true
		}
	}
	isDir := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.IsDir() || chainnode.IsDigest(p)
	}
	for _, sp := range splits {
		u, okU := endpoint(sp[0], *dirs)
		d, okD := endpoint(sp[1], *dirs)
		if (!okU && !isDir(sp[0])) || (!okD && !isDir(sp[1])) {
			continue
		}
		if !okU {
			*dirs = append(*dirs, sp[0])
			u = len(*dirs) - 1
		}
		if !okD {
			if d, okD = endpoint(sp[1], *dirs); !okD {
				*dirs = append(*dirs, sp[1])
				d = len(*dirs) - 1
			}
		}
		return u, d, true
	}
	return 0, 0, false
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &verifyChainOptions{}
	c := &cobra.Command{
		Use:   "verify-chain DIR DIR [DIR...]",
		Short: "Prove mirror partitions consistent with their sources across a KIP-1279 topology",
		Long: `Check that each downstream partition of a mirror topology is what KIP-1279
cluster mirroring makes of its upstream partition. For one edge U → D (both
partition directories of the same topic partition) the relation is:

  D = U's batches, byte for byte, from the first offset both hold up to where
      D stopped mirroring                                    (the mirrored region)
    + D's own STOPPING step, if it failed over: ABORT markers (design 2), then
      its MIRROR_PID_RESET barrier, with no gap and no overlap
    + only D's own writes after that                         (the local region)

A D still mirroring has no barrier of its own and is a prefix of U (it lags);
barriers U holds are in the mirrored region like any batch and must clear D's
producer state there too. Failback is the same relation with the roles
swapped (--edge B=A), after A aligned its log (kseg mirror --align).

Any DIR may instead be a digest of one (kseg digest): a digest file, or "-"
for a digest on stdin, so that the logs of other clusters never move
(ssh broker-b kseg digest DIR | kseg verify-chain A -). The verdict and the
findings are the same as over the directory; a digest taken before the
other side wrote the data it is compared with is reported as digest-older
(a warning), not as a divergence.

By default each DIR mirrors the one before it (a chain A → B → C …). --edge
U=D, repeatable, describes any other topology: fan-out (--edge 1=2 --edge
1=3), fan-in (different partitions into one destination cluster: --edge 1=3
--edge 2=4), failback (--edge 2=1).

Per edge kseg streams both logs batch by batch in lockstep (never a whole log
in memory) and reports:
  - the mirrored region [start, end), compared over the CRC-covered bytes plus
    baseOffset, batchLength and magic; partitionLeaderEpoch differences are
    info (leader-epoch; with --strict-epochs the error leader-epoch-mismatch);
    the first difference is reported with its offset, file and byte position
    in both logs;
  - D's own barrier: where it is, that it is a well-formed MIRROR_PID_RESET
    batch, that no transaction is open at it (pitfall 8), and that offsets
    run on across it;
  - a D without a barrier: lagging (fine) or holding data beyond U's end
    (D wrote without failing over);
  - producer state: a replay of D with its barriers shows no pid-collision or
    sequence anomaly in D's own region; a replay ignoring them shows the
    collisions the barriers averted; the producer ids reused across barriers;
  - producer snapshots in D after a barrier that still hold producers from
    before it (stale-snapshot);
  - U's barriers mirrored at the same offsets and clearing D's state there.

Nothing is ever modified.
` + ui.ExitStatusHelp + `  (verify-chain: 0 every edge is consistent; 3 an edge has an error finding;
  2 also a digest that is cut short, garbled or of a newer format, with the
  byte and what was expected there; 4 two nodes of different partitions)
`,
		Example: `  kseg verify-chain /data/a/orders-0 /data/b/orders-0
  kseg verify-chain /data/a/orders-0 /data/b/orders-0 /data/c/orders-0        # A → B → C
  kseg verify-chain --edge 1=2 --edge 1=3 /data/a/orders-0 /data/b/orders-0 /data/c/orders-0
  kseg verify-chain --edge 2=1 /data/a/orders-0 /data/b/orders-0             # failback B → A
  kseg verify-chain --output json /data/a/orders-0 /data/b/orders-0 | jq .findings
  ssh broker-b kseg digest /var/lib/kafka/data/orders-0 | kseg verify-chain /data/a/orders-0 -`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, runVerifyChain)
}

func runVerifyChain(ctx context.Context, s *ui.Streams, o *verifyChainOptions, args []string) error {
	// The directories --edge added, as the arguments were (paths.go).
	dirs := inputs.RealPaths(o.dirs, len(args))
	for _, d := range dirs {
		if chainnode.IsDigest(d) {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.Mode().IsRegular() {
			return inputs.NotInput(d, "a file that is not a kseg digest",
				"verify-chain takes partition directories (<topic>-<partition> holding .log segments) or digests of them (kseg digest)")
		}
		if err := inputs.Check(s, "verify-chain", d, inputs.Partition); err != nil {
			return err
		}
	}
	nodes, closeNodes, err := chainnode.Open(s, dirs)
	defer closeNodes()
	if err != nil {
		return err
	}
	edges := o.pairs
	if len(edges) == 0 {
		for i := 0; i+1 < len(dirs); i++ {
			edges = append(edges, [2]int{i, i + 1})
		}
	}
	for _, e := range edges {
		if err := chainnode.CheckSamePartition(nodes[e[0]], nodes[e[1]]); err != nil {
			return err
		}
	}
	// The progress line: each edge reads its upstream log once and its
	// downstream log twice (the lockstep walk, then the replay); a digest
	// counts once, as the log it describes.
	total := func() int64 {
		var n int64
		for _, e := range edges {
			n += chainnode.Bytes(nodes[e[0]], 1) + chainnode.Bytes(nodes[e[1]], 2)
		}
		return n
	}
	rep, err := ui.StepProgress(s, "comparing", total, func(progress func(int64)) (*mirror.ChainReport, error) {
		return mirror.VerifyChainNodes(nodes, o.pairs, mirror.ChainOptions{StrictEpochs: o.strictEpochs, Progress: progress})
	})
	if err != nil {
		var re *edit.RefusalError
		var oe *edit.OptionError
		switch {
		case errors.As(err, &re):
			return &ui.ExitCodeError{Code: ui.ExitUsage, Err: fmt.Errorf("%s: %s", re.Path, re.Detail)}
		case errors.As(err, &oe):
			return &ui.ExitCodeError{Code: ui.ExitUsage, Err: fmt.Errorf("--%w", oe)}
		}
		return chainnode.InputError(err)
	}
	if err := newChainPrinter(s, o.output, chainnode.Digests(nodes)).Print(rep); err != nil {
		return err
	}
	if !rep.OK() {
		return ui.FindingsExit()
	}
	return nil
}
