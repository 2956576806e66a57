// Package ui is the output toolkit every kseg command renders through
// (gh's pkg/iostreams and tableprinter, restic's internal/ui): the
// streams and what is known about the terminal behind them (Streams,
// colour under --color, NO_COLOR, CLICOLOR and CLICOLOR_FORCE), escaping
// of bytes that came from data (Esc), the JSON-lines writer (JSONWriter),
// tables fitted to the terminal (RenderTable), the progress line
// (Progress), long lists summarised to their first and last items
// (Lister), plural-aware counts (Plural), --format templates
// (TemplateWriter), partitions run in parallel with their output in order
// (RunOrdered), the exit-code errors every command returns (UsageErrorf,
// FindingsExit, Refusedf …), and the way every command is finished from
// its options (NewCommand, with the flags most share: AddOutputFlag,
// AddJobsFlag).
//
// It knows no command and no Kafka file: a command package (cmd/dump,
// cmd/groups …) builds its printers from these pieces, and the root
// package cmd maps the errors to the process's exit code.
package ui
