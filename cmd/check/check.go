package check

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/check/expect"
	"github.com/kseg/kseg/cmd/check/tree"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
)

// checkOptions are the flags of `kseg check`.
type checkOptions struct {
	config          string
	output          string
	reports         []string
	writeBaseline   bool
	jobs            int
	deep            bool
	maxDecompressed int64
	verbose         bool

	// derived by Validate
	files []checkReportFile

	// snapshots builds the producer-state check of the run (replay-psm
	// --check-snapshots), given to NewCmd.
	snapshots NewSnapshotCheck
	// streams are the command's: their environment (Env) sets the
	// GITHUB_ACTIONS default of --output.
	streams *ui.Streams
}

// checkReportFile is one --report FORMAT=FILE.
type checkReportFile struct{ format, path string }

// checkFormats are the report formats, each in its own file
// (check_report_*.go). --output picks one for stdout (as every command's
// -o does; --format, every json command's template, applies to the json
// lines), --report FORMAT=FILE writes more.
var checkFormats = []string{"text", "table", "json", "junit", "sarif", "github"}

func (o *checkOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.config, "config", "", "the expectations file (default: "+expect.ConfigName+" in the working directory or the nearest directory above it)")
	f.StringVarP(&o.output, "output", "o", "text", "report format on stdout: "+strings.Join(checkFormats, "|")+" (github when GITHUB_ACTIONS=true)")
	f.StringArrayVar(&o.reports, "report", nil, "also write a report to a file, FORMAT=FILE (repeatable), e.g. junit=kseg.xml")
	f.BoolVar(&o.writeBaseline, "write-baseline", false, "write the findings of this run into the expectations file as expectations (created if absent), keeping those still met")
	ui.AddJobsFlag(c, &o.jobs, "partitions checked")
	f.BoolVar(&o.deep, "deep", false, "decode every record of every batch (dump --deep), everywhere; the file's deep: does it per path")
	f.Int64Var(&o.maxDecompressed, "max-decompressed-bytes", decode.DefaultMaxDecompressed, "refuse to decompress a batch beyond this many bytes (decompression-bomb guard)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "text also lists the findings that were expected, ignored or below fail-on")
}

func (o *checkOptions) Validate(c *cobra.Command, _ []string) error {
	if !c.Flags().Changed("output") && !c.Flags().Changed("format") && o.streams.Env != nil {
		if v, _ := o.streams.Env("GITHUB_ACTIONS"); v == "true" {
			o.output = "github"
		}
	}
	if !validCheckFormat(o.output) {
		return ui.UsageErrorf("--output must be %s, not %q", strings.Join(checkFormats, ", "), o.output)
	}
	for _, r := range o.reports {
		format, path, ok := strings.Cut(r, "=")
		if !ok || path == "" || !validCheckFormat(format) {
			return ui.UsageErrorf("--report %q: want FORMAT=FILE, FORMAT one of %s", r, strings.Join(checkFormats, ", "))
		}
		o.files = append(o.files, checkReportFile{format, path})
	}
	if o.jobs < 0 {
		return ui.UsageErrorf("--jobs must not be negative")
	}
	if o.maxDecompressed <= 0 || o.maxDecompressed > math.MaxInt32 {
		return ui.UsageErrorf("--max-decompressed-bytes must be between 1 and %d", math.MaxInt32)
	}
	return nil
}

func validCheckFormat(f string) bool {
	for _, v := range checkFormats {
		if f == v {
			return true
		}
	}
	return false
}

// NewCmd is `kseg check`; snapshots builds the producer-state replay it
// runs on every partition (replay-psm --check-snapshots, which the root
// of the tree assembles: check does not import another command).
func NewCmd(s *ui.Streams, snapshots NewSnapshotCheck) *cobra.Command {
	o := &checkOptions{snapshots: snapshots, streams: s}
	c := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Run every read check over Kafka data and judge the findings against an expectations file (for CI)",
		Long: `Run every check kseg has over each partition directory under the PATHs
(default: the working directory) and compare what they find with the
expectations file, as a linter does. A PATH is a partition directory, a log
directory, or any tree holding them: check walks it and skips what is not
Kafka data (hidden directories included).

Per partition, in one pass each (partitions --jobs at a time):
  segments        dump --verify-index --index-sanity-check: batch structure
                  and CRCs, offsets and leader epochs, .index, .timeindex and
                  .txnindex against the log, snapshots, checkpoints
                  (--deep, or deep: in the file, decodes every record too)
  producer-state  replay-psm --check-snapshots: producer-state anomalies and
                  every snapshot reproduced from the log
  pending-edit    an interrupted kseg write
Per log directory inside a PATH: checkpoints (its own files), and groups,
txns and metadata where __consumer_offsets, __transaction_state and
__cluster_metadata are present. Per edge declared in the file: chain
(verify-chain).

The expectations file, kseg-check.yaml, is found in the working directory
or the nearest directory above it, or given with --config; its paths are
relative to it. Per path (a directory or a glob) it lists findings that
must be there (expect: kind, and optionally file, position, offset,
subject, count), kinds to ignore, the severity that fails (fail-on: error,
the default; warning; info), deep decoding, and mirror edges to verify. It
is read strictly: an unknown key, a wrong type or a path that does not
exist is a usage error (exit 2) naming the file and line. See docs/ci.md.

Each finding is expected (pass), new (fail, when its severity reaches
fail-on), ignored, or a note below fail-on; an expectation nothing meets is
missing (fail: the fixture is no longer broken that way, or kseg stopped
seeing it). Failures name the file, byte position and offset.
--write-baseline writes the findings of the run into the file as
expectations (keeping those still met and their comments), so adopting
check on an existing tree is one command and a reviewable diff.

Reports: -o/--output picks what goes to stdout (text, table, json lines,
junit XML, SARIF 2.1.0, or github workflow commands — the default when
GITHUB_ACTIONS=true); --report FORMAT=FILE, repeatable, writes more from
the same run. The summary line ends a text or table report on stdout, as
every command's count line does; after a machine report it goes to stderr.
` + ui.ExitStatusHelp + `  (check: 0 everything as expected; 3 a new finding or a missing one;
   1 a partition could not be read — the others were still checked)
`,
		Example: `  kseg check                                   # the tree here, with ./kseg-check.yaml if there is one
  kseg check --write-baseline testdata         # adopt: expect everything found today
  kseg check --config testdata/kseg-check.yaml testdata
  kseg check --report junit=kseg.xml --report sarif=kseg.sarif /var/lib/kafka/data
  kseg check -o json fixtures | jq 'select(.status=="new")'
  kseg check --format '{{if eq .status "new"}}{{.finding.file}}{{end}}' fixtures`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, runCheck)
}

// checkLoadConfig is the expectations file: --config, or the nearest one
// found, or the defaults. --write-baseline may name a file to create.
func checkLoadConfig(o *checkOptions) (*expect.Config, error) {
	path := o.config
	if path == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, inputs.IOError(err)
		}
		if path, err = expect.Find(wd); err != nil {
			return nil, inputs.IOError(err)
		}
		if path == "" {
			cfg, err := expect.Default()
			if err == nil && o.writeBaseline {
				cfg.File = expect.ConfigName
			}
			return cfg, err
		}
		if rel, err := filepath.Rel(wd, path); err == nil {
			path = rel
		}
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && o.writeBaseline {
		cfg, err := expect.Default()
		if err != nil {
			return nil, err
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, inputs.IOError(err)
		}
		cfg.File, cfg.Dir = path, filepath.Dir(abs)
		return cfg, nil
	}
	return expect.Load(path)
}

// runCheck checks the trees under paths (none: the working directory).
func runCheck(ctx context.Context, s *ui.Streams, o *checkOptions, paths []string) error {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	cfg, err := checkLoadConfig(o)
	if err != nil {
		return err
	}
	walked, err := tree.Walk(paths)
	if err != nil {
		return err
	}
	if len(walked.Partitions) == 0 && len(walked.Unreadable) == 0 {
		return ui.UsageErrorf("no Kafka partition directory under %s: check takes partitions, log directories, or trees holding them", strings.Join(paths, ", "))
	}
	scope := newCheckScope(cfg, walked)
	engine, err := newCheckEngine(o.jobs, func(abs string) bool {
		_, _, deep := scope.settings(abs)
		return o.deep || deep
	}, o.maxDecompressed, o.snapshots)
	if err != nil {
		return err
	}
	units := checkUnits(cfg, walked)
	// The progress line (a terminal only): units checked.
	prog := ui.NewItemProgress(s, "checking", 0, int64(len(units)), "directories")
	engine.unitDone = prog.ItemDone
	cases := engine.run(ctx, units)
	prog.Done()
	if err := ctx.Err(); err != nil {
		return err
	}
	res := scope.judge(cases)
	if o.writeBaseline {
		return writeCheckBaseline(s, res)
	}
	if err := renderCheck(s, o, o.output, res); err != nil {
		return err
	}
	for _, f := range o.files {
		if err := writeCheckReport(s, o, f, res); err != nil {
			return err
		}
	}
	if !s.Quiet {
		printCheckSummary(s, o.output, walked, res)
	}
	if code := res.exitCode(); code != ui.ExitOK {
		return &ui.ExitCodeError{Code: code, Silent: true}
	}
	return nil
}

// checkUnits lists the work of a run: every partition, every log
// directory inside a PATH, and every edge of the file whose downstream
// partition is inside one.
func checkUnits(cfg *expect.Config, tree *tree.Tree) []checkUnit {
	var units []checkUnit
	for i := range tree.Partitions {
		p := &tree.Partitions[i]
		suite := filepath.Dir(p.Path)
		units = append(units, checkUnit{part: p, suite: suite})
	}
	for _, ld := range tree.LogDirs {
		units = append(units, checkUnit{ld: ld, suite: ld.Path})
	}
	// An edge's ends as the walk spelled them, when it met them.
	walked := map[string]string{}
	for _, p := range tree.Partitions {
		walked[p.Abs] = p.Path
	}
	spell := func(abs string) string {
		if p, ok := walked[abs]; ok {
			return p
		}
		return cfg.Display(abs)
	}
	for _, e := range cfg.Entries {
		for _, m := range e.Matches {
			for _, ed := range e.Edges {
				down := filepath.Join(m, filepath.FromSlash(ed.Down))
				if !tree.Inside(down) {
					continue
				}
				run := &checkEdgeRun{up: spell(filepath.Join(m, filepath.FromSlash(ed.Upstream))), down: spell(down), downAbs: down}
				units = append(units, checkUnit{edge: run, suite: filepath.Dir(run.down)})
			}
		}
	}
	for _, w := range tree.Unreadable {
		abs, _ := filepath.Abs(w.Path)
		units = append(units, checkUnit{walkErr: &checkCase{suite: filepath.Dir(w.Path), unit: w.Path, abs: abs, check: checkSegments, err: w.Err}})
	}
	return units
}

// printCheckSummary is the last line: the count line of the report, on
// stdout after a text or table report, as every command prints its count
// line (README "Exit status"); on stderr after a machine report (junit,
// sarif, github, json), which stdout must carry alone.
func printCheckSummary(s *ui.Streams, output string, tree *tree.Tree, r *checkResult) {
	failed := 0
	for i := range r.cases {
		if r.caseFailed(i) {
			failed++
		}
	}
	w := s.Err
	if output == "text" || output == "table" {
		w = s.Out
	}
	fmt.Fprintf(w, "kseg check: %s, %s: %s, %d failed (%s, %s, %d unreadable); %d expected, %d ignored, %s below fail-on (%s)\n",
		ui.Plural(len(tree.Partitions), "partition"), ui.Plural(len(tree.LogDirs), "log directory"), ui.Plural(len(r.cases), "check"), failed,
		ui.Plural(r.counts[statusNew], "new finding"), ui.Plural(r.counts[statusMissing], "missing expectation"), r.unreadable,
		r.counts[statusExpected], r.counts[statusIgnored], ui.Plural(r.counts[statusNote], "note"), r.cfg.DisplayFile())
}
