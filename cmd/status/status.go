// Package status is kseg status: one line per partition saying whether a
// broker would load it as it is, from one CRC walk and a producer-state
// rebuild.
package status

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/status"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// statusOptions are the flags of `kseg status`.
type statusOptions struct {
	output string
	jobs   int
}

func (o *statusOptions) AddFlags(c *cobra.Command) {
	ui.AddOutputFlag(c, &o.output)
	ui.AddJobsFlag(c, &o.jobs, "partitions read (for a log directory)")
}

func (o *statusOptions) Validate(_ *cobra.Command, args []string) error {
	if err := ui.ValidateOutput(o.output); err != nil {
		return err
	}
	if len(args) == 0 {
		return ui.UsageErrorf("status needs a partition directory or a log directory")
	}
	if o.jobs < 0 {
		return ui.UsageErrorf("--jobs must be 0 (one per CPU) or a positive number, not %d", o.jobs)
	}
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &statusOptions{}
	c := &cobra.Command{
		Use:   "status PATH...",
		Short: "One screen per partition or log directory: size, offsets, records, producers, and a verdict",
		Long: `Summarise a partition directory, or every partition of a log directory, as
kafka-log-dirs --describe does (size, offsets) plus what kseg knows offline:
the segments, the records and the time range they span, the producers and
open transactions a restarting broker rebuilds, the newest producer snapshot
and whether the broker starts from it, the last leader epoch, and the
findings. The last line is the verdict: "healthy", or "N findings (kseg check
for details)".

status is the quick look: it reads every segment once, checking each batch's
CRC (not the records inside, not the indexes), and rebuilds the producer
state as a restarting broker does (from the newest usable snapshot, as kseg
replay-psm). Its findings are the damage that walk meets (a CRC mismatch, a
torn or corrupt tail, mid-log corruption) and the producer-state anomalies
of the rebuild; kseg check also verifies the indexes, the snapshots and the
log directory's views. Warnings alone (a preallocated zero tail)
leave the verdict healthy. Nothing is written.

A partition prints as labelled lines; a log directory as a table with a row
per partition on a terminal (-o table), one line per partition when piped,
and -o json writes one {"type":"partitionStatus"} object per partition, one
{"type":"logDirStatus"} per log directory and one {"type":"finding"} per
finding.

Findings (exit 3) are findings of severity error; a partition that cannot be
read is reported and the others are still read (exit 1).
` + ui.ExitStatusHelp,
		Example: `  kseg status /var/lib/kafka/data/orders-0
  kseg status /var/lib/kafka/data
  kseg status -o json /var/lib/kafka/data | jq 'select(.type=="partitionStatus" and .errors > 0) | .partition'`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, runStatus)
}

// statusTarget is one argument: a partition directory, or a log directory
// and its partitions.
type statusTarget struct {
	path   string
	logDir bool
	rows   []statusRow
}

// statusRow is one partition's status, or why it could not be read.
type statusRow struct {
	dir string
	st  *status.Partition
	err error
}

func runStatus(ctx context.Context, s *ui.Streams, o *statusOptions, args []string) error {
	if err := inputs.CheckAll(s, "status", args, inputs.PartitionOrLogDir); err != nil {
		return err
	}
	var targets []*statusTarget
	var all []*statusRow
	for _, a := range args {
		t := &statusTarget{path: a}
		if !segment.IsPartitionDir(a) {
			if ld, err := segment.OpenLogDir(a); err == nil && len(ld.Partitions) > 0 {
				t.logDir = true
				t.rows = make([]statusRow, len(ld.Partitions))
				for i, d := range ld.Partitions {
					t.rows[i].dir = d
				}
			}
		}
		if !t.logDir {
			t.rows = []statusRow{{dir: a}}
		}
		for i := range t.rows {
			all = append(all, &t.rows[i])
		}
		targets = append(targets, t)
	}
	readStatuses(ctx, all, ui.ResolveJobs(o.jobs))
	if err := newStatusPrinter(s, o).Print(targets); err != nil {
		return err
	}
	failed, errs := 0, 0
	for _, r := range all {
		if r.err != nil {
			failed++
			continue
		}
		e, _ := r.st.Count()
		errs += e
	}
	switch {
	case failed > 0:
		return &ui.ExitCodeError{Code: ui.ExitError, Silent: true}
	case errs > 0:
		return ui.FindingsExit()
	}
	return nil
}

// readStatuses reads every row, jobs at a time.
func readStatuses(ctx context.Context, rows []*statusRow, jobs int) {
	// One reading of each log directory's checkpoints for all its rows.
	logDirs := segment.NewLogDirCache()
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(jobs, len(rows)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(rows) {
					return
				}
				r := rows[i]
				if r.err = ctx.Err(); r.err == nil {
					r.st, r.err = status.Read(r.dir, status.Options{LogDirs: logDirs})
				}
			}
		}()
	}
	wg.Wait()
}

type statusPrinter interface {
	Print(ts []*statusTarget) error
}

func newStatusPrinter(s *ui.Streams, o *statusOptions) statusPrinter {
	switch {
	case o.output == "json":
		return &jsonStatusPrinter{s: s}
	}
	return &textStatusPrinter{s: s, table: o.output == "table" || s.OutTTY}
}

// verdict is the last line: healthy, or how many findings there are.
func statusVerdict(errs, warns, failed, partitions int) string {
	switch {
	case failed > 0 && errs == 0:
		return fmt.Sprintf("%s unreadable (see above)", ui.Plural(failed, "partition"))
	case failed > 0:
		return fmt.Sprintf("%s (kseg check for details); %s unreadable", ui.Plural(errs, "finding"), ui.Plural(failed, "partition"))
	case errs > 0 && partitions > 1:
		return fmt.Sprintf("%s in the log directory (kseg check for details)", ui.Plural(errs, "finding"))
	case errs > 0:
		return fmt.Sprintf("%s (kseg check for details)", ui.Plural(errs, "finding"))
	case warns > 0:
		return fmt.Sprintf("healthy (%s: kseg check for details)", ui.Plural(warns, "warning"))
	}
	return "healthy"
}

// statusCounts adds up a target's findings.
func (t *statusTarget) counts() (errs, warns, failed int, size int64) {
	for _, r := range t.rows {
		if r.err != nil {
			failed++
			continue
		}
		e, w := r.st.Count()
		errs, warns, size = errs+e, warns+w, size+r.st.Size
	}
	return errs, warns, failed, size
}

func partitionName(r *statusRow) string {
	if r.st != nil && r.st.Topic != "" {
		return fmt.Sprintf("%s-%d", r.st.Topic, r.st.Partition)
	}
	return filepath.Base(filepath.Clean(r.dir))
}

func findingsOf(rows []statusRow) []finding.Finding {
	var fs []finding.Finding
	for _, r := range rows {
		if r.st != nil {
			fs = append(fs, r.st.Findings...)
		}
	}
	return fs
}
