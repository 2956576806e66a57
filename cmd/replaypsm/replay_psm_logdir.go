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
	rows := make([]replayPSMRow, len(dirs))
	// The progress line, before runOrdered captures the streams: bytes of
	// every partition's log, and partitions done.
	prog := ui.NewLogProgress(s, "replaying", dirs, true)
	defer prog.Done()
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
	findings, failed := 0, 0
	var tableRows [][]string
	for _, r := range rows {
		if r.err != nil {
			failed++
			tableRows = append(tableRows, []string{filepath.Base(r.dir), "error", "", "", "", "", "", "", r.err.Error()})
			continue
		}
		v, res := r.view, r.view.Result
		status := "ok"
		if v.hasFindings() {
			status = "FINDINGS"
			findings++
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
		tableRows = append(tableRows, []string{filepath.Base(r.dir), ui.I64(res.LogEndOffset), ui.I64(res.LastStableOffset),
			strconv.Itoa(len(res.Producers)), strconv.Itoa(len(res.Ongoing)), strconv.Itoa(len(res.Aborted)),
			strconv.Itoa(len(res.Barriers)), fmt.Sprintf("%d (%s)", len(res.Anomalies), ui.Plural(errs, "error")), checks + " " + status})
	}
	if o.output != "json" {
		header := []string{"partition", "logEnd", "LSO", "producers", "ongoing", "aborted", "barriers", "anomalies", "status"}
		ls := s.Lister()
		if o.output == "table" || s.OutTTY {
			(&ui.TableOut{W: s.Out, Width: s.Width}).Render(ls, header, tableRows, "partitions")
		} else {
			ls.Lines(len(tableRows), "partitions", func(i int) {
				r := tableRows[i]
				fmt.Fprintf(s.Out, "%-40s logEnd %s LSO %s producers %s ongoing %s aborted %s barriers %s anomalies %s snapshots %s\n",
					r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8])
			}, func(more string) { fmt.Fprintln(s.Out, more) })
		}
		if !s.Quiet {
			fmt.Fprintf(s.Out, "%s replayed: %d with findings, %d failed; %d without a .log skipped\n", ui.Plural(len(rows), "partition"), findings, failed, skipped)
		}
	}
	switch {
	case failed > 0:
		return &ui.ExitCodeError{Code: ui.ExitError, Silent: true}
	case findings > 0:
		return ui.FindingsExit()
	}
	return nil
}
