package replaypsm

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// replayPSMRow is one partition of a log-directory replay.
type replayPSMRow struct {
	dir  string
	view *replayPSMView
	err  error
}

// runReplayPSMLogDir replays every partition of a log directory on a
// bounded pool of --jobs workers (CI replays thousands of partitions) and
// prints, in partition order, one producerState object per line (json) or
// a summary table. A partition that fails is reported and does not stop
// the others.
func runReplayPSMLogDir(ctx context.Context, s *ui.Streams, o *replayPSMOptions, ld *segment.LogDir) error {
	if o.writeSnapshot != "" {
		return ui.UsageErrorf("--write-snapshot takes a partition directory, not the log directory %s", ld.Path)
	}
	// Partitions without a .log (a KRaft metadata directory holding only
	// snapshots, a partition being created) have no producer state.
	var dirs []string
	skipped := 0
	o.logDirs = segment.NewLogDirCache()
	for _, dir := range ld.Partitions {
		pd, err := o.logDirs.OpenPartitionDir(dir)
		if err == nil && !inputs.HasLogSegment(pd) {
			skipped++
			continue
		}
		dirs = append(dirs, dir)
	}
	// The progress line, before runOrdered captures the streams: bytes of
	// every partition's log, and partitions done.
	prog := ui.NewLogProgress(s, "replaying", dirs, true)
	defer prog.Done()
	rows := replayLogDir(ctx, o, dirs, s, prog)
	sum := summariseLogDir(rows)
	if o.output != "json" {
		printLogDir(s, o.output, sum.table)
		if !s.Quiet {
			fmt.Fprintf(s.Out, "%s replayed: %d with findings, %d failed; %d without a .log skipped\n", ui.Plural(len(rows), "partition"), sum.findings, sum.failed, skipped)
		}
	}
	switch {
	case sum.failed > 0:
		return &ui.ExitCodeError{Code: ui.ExitError, Silent: true}
	case sum.findings > 0:
		return ui.FindingsExit()
	}
	return nil
}

// replayLogDir replays the partition directories dirs on --jobs workers,
// each one's errors (and, for json, its object) written in partition
// order, telling prog.
func replayLogDir(ctx context.Context, o *replayPSMOptions, dirs []string, s *ui.Streams, prog *ui.Progress) []replayPSMRow {
	rows := make([]replayPSMRow, len(dirs))
	if prog.Enabled() {
		o.psm.Progress = prog.Add
	}
	ui.RunOrdered(s, len(dirs), ui.ResolveJobs(o.jobs), func() struct{} { return struct{}{} },
		func(_ struct{}, i int, us *ui.Streams) {
			dir := dirs[i]
			rows[i].dir = dir
			defer prog.ItemDone()
			if ctx.Err() != nil {
				rows[i].err = ctx.Err()
				return
			}
			v, err := replayPartition(us, o, dir)
			rows[i].view, rows[i].err = v, err
			if err != nil {
				fmt.Fprintf(us.Err, "kseg: %s: %v\n", dir, err)
				return
			}
			if o.output == "json" {
				// One object per line, written in partition order.
				if err := (&jsonReplayPSMPrinter{s: us}).Print(v); err != nil {
					rows[i].err = err
				}
			}
		})
	return rows
}

// logDirSummary is a log-directory replay in one row per partition, and
// how many partitions have findings or failed.
type logDirSummary struct {
	table            [][]string
	findings, failed int
}

// summariseLogDir is the summary of the replays rows.
func summariseLogDir(rows []replayPSMRow) logDirSummary {
	var sum logDirSummary
	for _, r := range rows {
		if r.err != nil {
			sum.failed++
			sum.table = append(sum.table, []string{filepath.Base(r.dir), "error", "", "", "", "", "", "", r.err.Error()})
			continue
		}
		v, res := r.view, r.view.Result
		status := "ok"
		if v.hasFindings() {
			status = "FINDINGS"
			sum.findings++
		}
		errs := 0
		for _, a := range res.Anomalies {
			if a.IsError() {
				errs++
			}
		}
		checks := "-"
		if v.Checked {
			match := 0
			for _, c := range v.Checks {
				if c.Status == psm.CheckMatch {
					match++
				}
			}
			checks = fmt.Sprintf("%d/%d match", match, len(v.Checks))
		}
		sum.table = append(sum.table, []string{filepath.Base(r.dir), ui.I64(res.LogEndOffset), ui.I64(res.LastStableOffset),
			strconv.Itoa(len(res.Producers)), strconv.Itoa(len(res.Ongoing)), strconv.Itoa(len(res.Aborted)),
			strconv.Itoa(len(res.Barriers)), fmt.Sprintf("%d (%s)", len(res.Anomalies), ui.Plural(errs, "error")), checks + " " + status})
	}
	return sum
}

// printLogDir prints the summary rows as a table (--output table, or text
// on a terminal) or as lines.
func printLogDir(s *ui.Streams, output string, rows [][]string) {
	header := []string{"partition", "logEnd", "LSO", "producers", "ongoing", "aborted", "barriers", "anomalies", "status"}
	ls := s.Lister()
	if output == "table" || s.OutTTY {
		(&ui.TableOut{W: s.Out, Width: s.Width}).Render(ls, header, rows, "partitions")
		return
	}
	ls.Lines(len(rows), "partitions", func(i int) {
		r := rows[i]
		fmt.Fprintf(s.Out, "%-40s logEnd %s LSO %s producers %s ongoing %s aborted %s barriers %s anomalies %s snapshots %s\n",
			r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8])
	}, func(more string) { fmt.Fprintln(s.Out, more) })
}
