// Package scan is the dump engine: it reads every file of Kafka partition
// directories (segments, indexes, snapshots, checkpoints, the metadata
// files) in a stable order and tells a Printer what it finds, event by
// event, in file order. kseg dump renders the events (text, table, json,
// and kafka-dump-log's format, segment/dumplog); kseg check keeps the
// findings; a library caller passes a Printer of its own:
//
//	files, unread, err := scan.Collect(paths, false, nil)
//	o := scan.DefaultOptions()
//	run := scan.NewRun(printer, &o, 0, false) // 0: a worker per core
//	defer run.Close()
//	ioErr, err := run.Files(ctx, files, 0)
//	// run.Errors(), run.Warnings(): the findings by severity
//
// What a run does with each .log:
//
//   - frames the batches (segment.Scanner over a mapped file), checks
//     each one's CRC-32C and, with Deep, decodes its records (control
//     records always), on worker goroutines when there is more than one
//     core (pipeline.go: whole jobs rendered by forks of a Forker; crc.go:
//     only the CRCs) — the events are the serial run's, byte for byte;
//   - checks each batch's place in the log (offsets only grow and fit the
//     segment, leader epochs never go back: resync.go) and, after
//     structural damage, searches for the next valid batch and reads on
//     from there, reporting the bytes it skipped, unless NoResync;
//   - classifies the tail (clean, zero-filled, torn, corrupt: validBytes
//     is where the broker's recovery truncates);
//   - after a partition's last .log, reports segments whose offsets run
//     into the next one's, and runs the caller's PartitionCheck
//     (logstart.go).
//
// Other files are decoded entry by entry, narrowed by the filters
// (select.go), with index verification against the log (entries.go,
// walkverify.go). With DumpLogSegments the run reads as kafka-dump-log
// (DumpLogSegments of Kafka 4.3) reads: it dispatches on the file name and
// stops where Kafka throws (dumplog.go). A log directory is cut into units,
// one per partition, that callers may read on several goroutines (units.go).
//
// The package never prints, reads flags or exits. Findings carry their
// file, byte position and baseOffset (finding.Finding); an I/O error on a
// file goes to Run.FileError and the run reads on.
package scan
