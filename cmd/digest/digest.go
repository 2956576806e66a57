// Package digest is kseg digest: a partition's digest (every batch's header
// and hash, its tails and snapshots) written for verify-chain and mirror to
// compare against where the partition itself is out of reach.
package digest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/version"
	"github.com/kseg/kseg/segment"
	segdigest "github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/edit"
)

// digestOptions are the flags of `kseg digest`.
type digestOptions struct {
	out  string
	from string
	hash string

	// derived by Validate
	h        segdigest.Hash
	fromOff  int64  // -1: the whole log
	fromFile string // an earlier digest to continue
}

func (o *digestOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVarP(&o.out, "out", "o", "", "write the digest to FILE (for a log directory: into the directory FILE, one <partition>.digest per partition) instead of stdout")
	f.StringVar(&o.from, "from", "", "an incremental digest: the batches from OFFSET on, to append to an earlier digest that holds those before; or an earlier digest FILE, continued from its log end")
	f.StringVar(&o.hash, "hash", "xxh3-128", "the batch hash: xxh3-128 or sha256")
}

func (o *digestOptions) Validate(_ *cobra.Command, _ []string) error {
	h, err := segdigest.ParseHash(o.hash)
	if err != nil {
		return ui.UsageErrorf("--hash: %v", err)
	}
	o.h, o.fromOff = h, -1
	if o.from != "" {
		if n, err := strconv.ParseInt(o.from, 10, 64); err == nil {
			if n < 0 {
				return ui.UsageErrorf("--from %d: an offset is not negative", n)
			}
			o.fromOff = n
		} else {
			o.fromFile = o.from
		}
	}
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &digestOptions{}
	c := &cobra.Command{
		Use:   "digest PATH",
		Short: "Write a compact digest of a partition, for verify-chain and mirror --dry-run elsewhere",
		Long: `Write a digest of a partition directory: a few dozen bytes per batch that
hold everything kseg verify-chain and kseg mirror --dry-run read of the
partition, so that a mirror chain across clusters (and regions) is proved
without moving its logs:

  ssh broker-b kseg digest /var/lib/kafka/data/orders-0 | kseg verify-chain /data/a/orders-0 -

Per batch the digest holds every header field (baseOffset, batchLength,
partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, timestamps,
producerId, producerEpoch, baseSequence, recordsCount), a hash of the bytes
the CRC covers (xxh3-128, or SHA-256 with --hash sha256), and the bytes of
control batches (transaction markers, MIRROR_PID_RESET barriers) and of
batches that fail their CRC. Per partition: its topic, partition and topic
id, the log-start-offset-checkpoint entry, every segment's name, size and
modification time and how it ends, the producer snapshots, the log end
offset. docs/digest.md describes the format (versioned, read and written in
one pass).

PATH is a partition directory (the digest goes to stdout or --out FILE),
or a log directory (one digest per partition, into the directory --out
DIR). A broker may be running: the digest is of the log as it was read,
ending at its last whole batch.

--from makes an incremental digest: only the batches from OFFSET on, to be
appended to an earlier digest of the partition (cat, >>), which then reads
as a digest of the whole log. --from FILE continues the earlier digest
FILE from its log end, and checks that the log still holds the batch FILE
ends with (a log truncated at a failover does not).

Nothing in the partition is modified.
` + ui.ExitStatusHelp + `  (digest: 3 the log no longer holds the batch --from FILE ends with; 4 an
  interrupted kseg write is pending in the partition)
`,
		Example: `  kseg digest /var/lib/kafka/data/orders-0 > orders-0.digest
  kseg digest -o /tmp/digests /var/lib/kafka/data                    # every partition
  kseg digest --hash sha256 -o orders-0.digest /var/lib/kafka/data/orders-0
  kseg digest --from orders-0.digest /var/lib/kafka/data/orders-0 >> orders-0.digest`,
		Args: cobra.ExactArgs(1),
	}
	return ui.NewCommand(c, s, o, runDigest)
}

func runDigest(ctx context.Context, s *ui.Streams, o *digestOptions, args []string) error {
	path := args[0]
	if err := inputs.Check(s, "digest", path, inputs.PartitionOrLogDir); err != nil {
		return err
	}
	pd, err := segment.OpenPartitionDir(path)
	if err != nil {
		return err
	}
	if !inputs.HasLogSegment(pd) && !segment.IsPartitionDir(path) {
		return runDigestLogDir(ctx, s, o, path)
	}
	if o.out == "" && s.OutTTY {
		return ui.UsageErrorf("a digest is binary: redirect stdout to a file or a pipe, or give --out FILE")
	}
	if o.out != "" {
		if st, err := os.Stat(o.out); err == nil && st.IsDir() {
			return ui.UsageErrorf("--out %s is a directory: for one partition, --out names the digest file", o.out)
		}
	}
	sum, err := digestPartition(s, o, path, o.out)
	if err != nil {
		return err
	}
	digestSummary(s, sum, o.out)
	return nil
}

// runDigestLogDir digests every live partition of a log directory into
// the directory --out names.
func runDigestLogDir(ctx context.Context, s *ui.Streams, o *digestOptions, path string) error {
	if o.out == "" {
		return ui.UsageErrorf("%s is a log directory: give --out DIR, the directory to write one <partition>.digest per partition into", path)
	}
	if o.from != "" {
		return ui.UsageErrorf("--from continues one partition's digest: give a partition directory, not the log directory %s", path)
	}
	ld, err := segment.OpenLogDir(path)
	if err != nil {
		return err
	}
	if err := makeDigestDir(o.out); err != nil {
		return err
	}
	failed := 0
	for _, dir := range ld.Partitions {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := filepath.Base(dir)
		if n, ok := segment.ParsePartitionDir(name); !ok || n.State != segment.DirLive {
			continue
		}
		out := filepath.Join(o.out, name+".digest")
		sum, err := digestPartition(s, o, dir, out)
		if err != nil {
			fmt.Fprintf(s.Err, "kseg: %s: %v\n", dir, err)
			failed++
			continue
		}
		digestSummary(s, sum, out)
	}
	if failed > 0 {
		return &ui.ExitCodeError{Code: ui.ExitError, Err: fmt.Errorf("%d of %d partitions could not be digested", failed, len(ld.Partitions))}
	}
	return nil
}

// digestPartition writes the digest of the partition directory dir to out
// (stdout when ""): through a temporary file renamed at the end, so that
// out is never a digest cut short.
func digestPartition(s *ui.Streams, o *digestOptions, dir, out string) (*segdigest.Summary, error) {
	if edit.HasJournal(dir) {
		return nil, ui.Refusedf("refused (pending-edit): %s: an interrupted kseg write is pending (%s): finish it or roll it back before digesting the partition",
			dir, edit.JournalName)
	}
	// Mapped, not read: the digest touches every byte once (its hash and
	// CRC), where mapping costs least (BenchmarkWrite: read 1.6× the CPU).
	opts := segdigest.Options{Hash: o.h, From: o.fromOff, Version: version.Read().Version, Mmap: true}
	opts.Host, _ = os.Hostname()
	if _, held, err := edit.BrokerLock(filepath.Join(segment.LogDirOf(dir), segment.LockName)); err == nil && held {
		opts.Live = true
	}
	var earlier *segdigest.Digest
	if o.fromFile != "" {
		d, err := segdigest.Open(o.fromFile)
		if err != nil {
			return nil, chainnode.InputError(err)
		}
		defer d.Close()
		earlier = d
		opts.From = d.Info().LogEnd
	}
	if out == "" && earlier == nil {
		return ui.StepProgress(s, "digesting", func() int64 { return ui.LogBytes(dir) }, func(p func(int64)) (*segdigest.Summary, error) {
			opts.Progress = p
			return segdigest.Write(s.Out, dir, opts)
		})
	}
	return writeDigestOut(out, s.Out, func(tmp *os.File) (*segdigest.Summary, error) {
		sum, err := ui.StepProgress(s, "digesting", func() int64 { return ui.LogBytes(dir) }, func(p func(int64)) (*segdigest.Summary, error) {
			opts.Progress = p
			return segdigest.Write(tmp, dir, opts)
		})
		if err == nil && earlier != nil {
			err = checkContinues(o.fromFile, tmp)
		}
		return sum, err
	})
}

// writeDigestOut has write write a digest into a temporary file, then
// renames it to out, so that out is never a digest cut short, or copies
// it to stdout when out is "". These are the only files kseg digest
// writes: the partition is only read.
func writeDigestOut(out string, stdout io.Writer, write func(*os.File) (*segdigest.Summary, error)) (*segdigest.Summary, error) {
	tmpDir := os.TempDir()
	if out != "" {
		tmpDir = filepath.Dir(out)
	}
	tmp, err := os.CreateTemp(tmpDir, ".kseg-digest-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	sum, err := write(tmp)
	if err != nil {
		return nil, err
	}
	if out == "" {
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		_, err := io.Copy(stdout, tmp)
		return sum, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return nil, err
	}
	return sum, os.Rename(tmp.Name(), out)
}

// makeDigestDir creates the directory a log directory's digests go to.
func makeDigestDir(dir string) error { return os.MkdirAll(dir, 0o755) }

// checkContinues reads the earlier digest followed by the new section as
// one digest: the section must continue it (the same partition, the
// batch it ends with still in the log).
func checkContinues(earlier string, section *os.File) error {
	a, err := os.Open(earlier)
	if err != nil {
		return err
	}
	defer a.Close()
	sa, err := a.Stat()
	if err != nil {
		return err
	}
	sb, err := section.Stat()
	if err != nil {
		return err
	}
	r := &concatReaderAt{parts: []io.ReaderAt{a, section}, sizes: []int64{sa.Size(), sb.Size()}}
	_, err = segdigest.OpenReaderAt(r, sa.Size()+sb.Size(), earlier+" + the new section")
	if errors.Is(err, segdigest.ErrContinuation) {
		return &ui.ExitCodeError{Code: ui.ExitFindings, Err: fmt.Errorf("the partition does not continue %s: %w", earlier, err)}
	}
	return chainnode.InputError(err)
}

// concatReaderAt reads its parts one after the other.
type concatReaderAt struct {
	parts []io.ReaderAt
	sizes []int64
}

func (c *concatReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for i, r := range c.parts {
		if off >= c.sizes[i] {
			off -= c.sizes[i]
			continue
		}
		for n < len(p) && off < c.sizes[i] {
			k := int(min(int64(len(p)-n), c.sizes[i]-off))
			m, err := r.ReadAt(p[n:n+k], off)
			n += m
			off += int64(m)
			if err != nil && !(errors.Is(err, io.EOF) && m == k) {
				return n, err
			}
		}
		if n == len(p) {
			return n, nil
		}
		off = 0
	}
	return n, io.EOF
}

// digestSummary tells stderr what was written (not under --quiet).
func digestSummary(s *ui.Streams, sum *segdigest.Summary, out string) {
	if s.Quiet {
		return
	}
	where := "stdout"
	if out != "" {
		where = out
	}
	from := ""
	if sum.Start > 0 || sum.Start == sum.End {
		from = fmt.Sprintf(" from offset %d", sum.Start)
	}
	msg := fmt.Sprintf("Digest of %s-%d%s: %s in %s (%s of log), log end %d -> %s, %s (%s)",
		ui.Esc(sum.Topic), sum.Partition, from, chainnode.Batches(sum.Batches), ui.Plural(sum.Segments, "segment"), ui.HumanBytes(sum.LogBytes), sum.End,
		where, ui.HumanBytes(sum.Bytes), sum.Hash)
	if sum.InFlight > 0 {
		msg += fmt.Sprintf("; a broker holds the partition: %d bytes of an append in flight left out", sum.InFlight)
	}
	fmt.Fprintln(s.Err, msg)
}
