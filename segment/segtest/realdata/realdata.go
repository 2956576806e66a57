// Package realdata reads what the README of the shared real-broker
// fixtures (../shared/fixtures/real) says about them, so that tests derive
// their expectations from that independent description instead of from
// tables keyed to one set of fixtures:
//
//   - Manifest: every data file the README's SHA-256 lists (both sets)
//     name, relative to the fixture root;
//   - SecondSet: the per-partition rows of the "Second set" tables
//     (segments, batches, records, offsets, codecs, control records,
//     producer snapshots), keyed by the partition directory relative to
//     the root.
//
// It imports nothing from kseg but testkit (which imports nothing from
// kseg), so any package's internal tests above decode can use it.
package realdata

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Manifest returns the relative paths (slash-separated, no "./") of every
// file the README's SHA-256 lists and SHA256SUMS-2 name.
func Manifest(root string) ([]string, error) {
	seen := map[string]bool{}
	sum := regexp.MustCompile(`^[0-9a-f]{64}  \./(.+)$`)
	for _, name := range []string{"README.md", "SHA256SUMS-2"} {
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := sum.FindStringSubmatch(sc.Text()); m != nil {
				seen[m[1]] = true
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// SnapshotsNextToLog counts, in Manifest, the producer snapshots whose
// directory also holds a .log: what a walk of the tree for snapshots to
// check must find, derived from the README rather than from the walk.
func SnapshotsNextToLog(root string) (int, error) {
	files, err := Manifest(root)
	if err != nil {
		return 0, err
	}
	logDir := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, ".log") {
			logDir[path.Dir(f)] = true
		}
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".snapshot") && logDir[path.Dir(f)] {
			n++
		}
	}
	return n, nil
}

// SnapshotDirs walks root for the partition directories that hold both a
// .log and at least one producer snapshot (those whose snapshots
// SnapshotsNextToLog counts), in walk order; a failed walk ends tb.
func SnapshotDirs(tb testing.TB, root string) []string {
	tb.Helper()
	seen := map[string]bool{}
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".snapshot" {
			return err
		}
		dir := filepath.Dir(p)
		if logs, _ := filepath.Glob(filepath.Join(dir, "*.log")); len(logs) > 0 && !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return dirs
}

// Partition is one row of a "Second set" table.
type Partition struct {
	Dir                string // relative to the root, slash-separated
	Segments           int
	Bytes              int64 // of the .log files
	Batches, Records   int64
	First, Last        int64            // -1 when the row lists no offsets
	Codecs             map[string]int64 // batches per codec
	Control            map[string]int64 // control records in .log files
	CheckpointControl  map[string]int64 // in KRaft snapshot .checkpoint files ("ckpt:")
	Snapshots          int              // producer .snapshot files
	KRaftCheckpoints   int              // KRaft snapshot .checkpoint files
	IdempotentProducer int              // "N idempotent producer(s)", 0 when absent
}

// Healthy reports what the README says of the second set: every partition
// is healthy except those whose .log files were never committed.
func (p Partition) Healthy() bool { return p.Segments > 0 }

var (
	repoHead = regexp.MustCompile("^#{2,3} ([^ /]+)/([^ ]+) @ [0-9a-f]{40}")
	row      = regexp.MustCompile("^\\| `([^`]+)` \\| (.+) \\|$")
	batchRe  = regexp.MustCompile(`^(\d+) batches/(\d+) records$`)
	offRe    = regexp.MustCompile(`^offsets (\d+)\.\.(\d+)$`)
	codecRe  = regexp.MustCompile(`^(none|gzip|snappy|lz4|zstd):\d+(,(none|gzip|snappy|lz4|zstd):\d+)*$`)
	ctlRe    = regexp.MustCompile(`'([^']+)': (\d+)`)
	countRe  = regexp.MustCompile(`^(\d+) (.+)$`)
)

// SecondSet parses the README's "Second set" tables.
func SecondSet(root string) (map[string]Partition, error) {
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	text := string(raw)
	i := strings.Index(text, "\n## Second set")
	if i < 0 {
		return nil, fmt.Errorf("%s: no \"Second set\" section", filepath.Join(root, "README.md"))
	}
	out := map[string]Partition{}
	repo := ""
	for _, line := range strings.Split(text[i:], "\n") {
		if m := repoHead.FindStringSubmatch(line); m != nil {
			repo = m[1] + "__" + m[2]
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil || repo == "" {
			continue
		}
		p, err := parseRow(m[2])
		if err != nil {
			return nil, fmt.Errorf("README row %q: %w", line, err)
		}
		p.Dir = path.Join(repo, m[1])
		out[p.Dir] = p
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no partition rows in the \"Second set\" section", filepath.Join(root, "README.md"))
	}
	return out, nil
}

func parseRow(s string) (Partition, error) {
	p := Partition{First: -1, Last: -1, Codecs: map[string]int64{}, Control: map[string]int64{}, CheckpointControl: map[string]int64{}}
	for _, part := range strings.Split(s, "; ") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "control {") {
			for _, m := range ctlRe.FindAllStringSubmatch(part, -1) {
				n, _ := strconv.ParseInt(m[2], 10, 64)
				if k, ok := strings.CutPrefix(m[1], "ckpt:"); ok {
					p.CheckpointControl[k] = n
				} else {
					p.Control[m[1]] = n
				}
			}
			continue
		}
		if strings.HasPrefix(part, "leader epochs ") || strings.HasSuffix(part, "(compaction)") {
			continue
		}
		if codecRe.MatchString(part) {
			for _, kv := range strings.Split(part, ",") {
				k, v, _ := strings.Cut(kv, ":")
				n, _ := strconv.ParseInt(v, 10, 64)
				p.Codecs[k] = n
			}
			continue
		}
		for _, f := range strings.Split(part, ", ") {
			if m := batchRe.FindStringSubmatch(f); m != nil {
				p.Batches, _ = strconv.ParseInt(m[1], 10, 64)
				p.Records, _ = strconv.ParseInt(m[2], 10, 64)
				continue
			}
			if m := offRe.FindStringSubmatch(f); m != nil {
				p.First, _ = strconv.ParseInt(m[1], 10, 64)
				p.Last, _ = strconv.ParseInt(m[2], 10, 64)
				continue
			}
			m := countRe.FindStringSubmatch(f)
			if m == nil {
				return p, fmt.Errorf("unknown field %q", f)
			}
			n, _ := strconv.ParseInt(m[1], 10, 64)
			switch m[2] {
			case "seg", "segs":
				p.Segments = int(n)
			case "B":
				p.Bytes = n
			case ".snapshot":
				p.Snapshots = int(n)
			case "KRaft snapshot .checkpoint":
				p.KRaftCheckpoints = int(n)
			case "idempotent producer(s)":
				p.IdempotentProducer = int(n)
			default:
				return p, fmt.Errorf("unknown field %q", f)
			}
		}
	}
	return p, nil
}
