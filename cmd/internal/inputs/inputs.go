// Package inputs checks the paths a command is given, by one rule for
// every command (README "Exit status"): what cannot be read is an
// operational error (exit 1), what can be read but is not what the
// command takes is a usage error (exit 2), saying what it takes.
package inputs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// The rule for bad inputs, the same for every command (README "Exit
// status"). Check is the one place that applies it:
//
//   - a path that cannot be read — it does not exist, or permission is
//     denied — is an operational error: exit 1, in the operating system's
//     words ("no such file or directory", "permission denied");
//   - a path that can be read but is not what the command takes — a file
//     where a directory is expected, a directory that holds no .log segment
//     (an empty one, or one with indexes only), a directory whose name is
//     not <topic>-<partition> where the topic matters, a file that is not a
//     Kafka file — is a usage error: exit 2, saying what the command takes;
//   - exit 4 (refused) is kept for a real partition the command will not
//     act on (a broker holds it, an interrupted operation is pending, a
//     -delete directory …).

// inputKind is what a positional argument must be.
type inputKind int

const (
	// Partition: a live partition directory named <topic>-<partition>
	// holding a .log segment (or the journal of an interrupted kseg write).
	Partition inputKind = iota
	// PartitionOrLogDir: a directory holding .log segments, or a log
	// directory holding partition directories (replay-psm).
	PartitionOrLogDir
	// LogOrPartition: a .log segment file, or a directory holding one
	// (explain).
	LogOrPartition
	// KafkaPath: a file kseg decodes, or a directory holding some
	// (dump).
	KafkaPath
	// LogDir: a log directory (an entry of a broker's log.dirs)
	// holding partition directories (the whole-broker views: groups,
	// txns, metadata). One partition that cannot be read does not stop
	// them: they go on, say it could not be read (metadata calls its
	// replica unreadable, not missing) and exit 1 at the end.
	LogDir
)

// NotInput is a usage error about an argument: the path and what the
// command takes.
func NotInput(path, what, takes string) error {
	return &ui.ExitCodeError{Code: ui.ExitUsage, Err: fmt.Errorf("%s: %s; %s", path, what, takes)}
}

// IOError is an argument that cannot be read (exit 1).
func IOError(err error) error {
	return &ui.ExitCodeError{Code: ui.ExitError, Err: err}
}

// Check applies the rule above to one positional argument of command
// name.
func Check(s *ui.Streams, name, path string, kind inputKind) error {
	fsys := s.InputFS()
	takes := map[inputKind]string{
		Partition:         name + " takes a partition directory (<topic>-<partition> holding .log segments)",
		PartitionOrLogDir: name + " takes a partition directory or a log directory",
		LogOrPartition:    name + " takes a .log segment or a partition directory",
		KafkaPath:         name + " takes Kafka files, partition directories or log directories",
		LogDir:            name + " takes log directories (a broker's log.dirs, holding <topic>-<partition> directories)",
	}[kind]
	st, err := fsys.Stat(path)
	if err != nil {
		return IOError(err)
	}
	if !st.IsDir() {
		return checkFile(path, kind, takes)
	}
	entries, err := fsys.ReadDir(path)
	if err != nil {
		return IOError(err)
	}
	if kind == Partition && edit.HasJournal(path) {
		// An interrupted kseg write: the command finishes or rolls it
		// back (a mirror creating its destination leaves only this).
		return nil
	}
	return checkDir(path, kind, takes, countEntries(path, entries))
}

// checkFile is the rule for a path that is a file: only kafka-dump-log's
// Kafka files and a .log segment where a segment is taken.
func checkFile(path string, kind inputKind, takes string) error {
	fi, ok := segment.ParseFileName(filepath.Base(path))
	switch kind {
	case KafkaPath:
		if ok && fi.Kind != segment.KindUnknown {
			return nil
		}
		return NotInput(path, "not a Kafka file (its name says what it holds: NNN.log, NNN.index, leader-epoch-checkpoint …)", takes)
	case LogOrPartition:
		if ok && (fi.Kind == segment.KindLog || fi.Kind == segment.KindMetadataSnapshot) {
			return nil
		}
		return NotInput(path, "not a .log segment", takes)
	}
	return NotInput(path, "a file, not a directory", takes)
}

// dirEntries counts what a directory holds: its .log segments, its Kafka
// files and its partition directories.
type dirEntries struct {
	logs, kafka, partitions int
	empty                   bool
}

func countEntries(path string, entries []fs.DirEntry) dirEntries {
	c := dirEntries{empty: len(entries) == 0}
	for _, e := range entries {
		fi, ok := segment.ParseFileName(e.Name())
		if isDirEntry(path, e) {
			if _, ok := segment.ParsePartitionDir(e.Name()); ok {
				c.partitions++
			}
			continue
		}
		if !ok || fi.Kind == segment.KindUnknown || fi.Transient() {
			continue
		}
		c.kafka++
		if fi.Kind == segment.KindLog {
			c.logs++
		}
	}
	return c
}

// checkDir is the rule for a path that is a directory holding c.
func checkDir(path string, kind inputKind, takes string, c dirEntries) error {
	switch kind {
	case KafkaPath:
		if c.kafka > 0 || c.partitions > 0 {
			return nil
		}
		if c.empty {
			return NotInput(path, "an empty directory", takes)
		}
		return NotInput(path, "holds no Kafka file and no partition directory", takes)
	case PartitionOrLogDir:
		if c.logs > 0 || c.partitions > 0 {
			return nil
		}
	case LogDir:
		if c.partitions > 0 {
			return nil
		}
		switch {
		case c.empty:
			return NotInput(path, "an empty directory", takes)
		case c.logs > 0:
			return NotInput(path, "a partition directory, not a log directory", takes+"; give the directory that holds it")
		}
		return NotInput(path, "holds no partition directory", takes)
	case LogOrPartition:
		if c.logs > 0 {
			return nil
		}
	case Partition:
		if _, ok := segment.ParsePartitionDir(filepath.Base(filepath.Clean(path))); !ok {
			return NotInput(path, "the name is not <topic>-<partition>", takes)
		}
		if c.logs > 0 {
			return nil
		}
	}
	if c.empty {
		return NotInput(path, "an empty directory", takes)
	}
	return NotInput(path, "holds no .log segment", takes)
}

// CheckAll checks every path as kind.
func CheckAll(s *ui.Streams, name string, paths []string, kind inputKind) error {
	for _, p := range paths {
		if err := Check(s, name, p, kind); err != nil {
			return err
		}
	}
	return nil
}

// isDirEntry: e is a directory, or a symbolic link to one (a partition
// directory moved to another disk and linked back).
func isDirEntry(dir string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && st.IsDir()
}

// CheckMirror: SRC is a partition; DST may not exist yet (the mirror
// creates it), but when it exists it must be a directory.
func CheckMirror(s *ui.Streams, args []string, rollback bool) error {
	dst := args[len(args)-1]
	if rollback {
		return Check(s, "mirror --rollback", dst, Partition)
	}
	if err := Check(s, "mirror", args[0], Partition); err != nil {
		return err
	}
	// DST may not exist yet, but its name is the partition's either way.
	if _, ok := segment.ParsePartitionDir(filepath.Base(filepath.Clean(dst))); !ok {
		return NotInput(dst, "the name is not <topic>-<partition>", "mirror takes a destination partition directory (or one to create)")
	}
	st, err := s.InputFS().Stat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return IOError(err)
	case !st.IsDir():
		return NotInput(dst, "a file, not a directory", "mirror takes a destination partition directory (or one to create)")
	}
	return nil
}

func HasLogSegment(pd *segment.PartitionDir) bool {
	for _, sg := range pd.Segments {
		if sg.Log != "" {
			return true
		}
	}
	return false
}
