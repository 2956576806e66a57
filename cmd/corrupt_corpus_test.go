package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/segtest"
)

// corpusHeapLimit bounds the heap in use while the corpus is dumped.
const corpusHeapLimit = 64 << 20

// dumpFinding is a finding line of dump's JSON output.
type dumpFinding struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	File     string `json:"file"`
	Position *int64 `json:"position"`
	To       int64  `json:"to"`
}

// corpusDump is what the corpus test reads back from `dump -o json`.
type corpusDump struct {
	findings []dumpFinding
	batches  map[string][]int64 // file base name → batch positions, in output order
}

func parseCorpusDump(t *testing.T, out string) corpusDump {
	t.Helper()
	d := corpusDump{batches: map[string][]int64{}}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m struct {
			Type     string `json:"type"`
			File     string `json:"file"`
			Position int64  `json:"position"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		switch m.Type {
		case "finding":
			var f dumpFinding
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatal(err)
			}
			d.findings = append(d.findings, f)
		case "batch":
			d.batches[filepath.Base(m.File)] = append(d.batches[filepath.Base(m.File)], m.Position)
		}
	}
	return d
}

func (d corpusDump) has(kind, file string, pos int64, severity string) bool {
	for _, f := range d.findings {
		if f.Kind == kind && filepath.Base(f.File) == file && f.Position != nil && *f.Position == pos && f.Severity == severity {
			return true
		}
	}
	return false
}

func (d corpusDump) String() string {
	var b strings.Builder
	for _, f := range d.findings {
		pos := "null"
		if f.Position != nil {
			pos = strconv.FormatInt(*f.Position, 10)
		}
		fmt.Fprintf(&b, "  %s %s %s @%s\n", f.Severity, f.Kind, filepath.Base(f.File), pos)
	}
	return b.String()
}

// runCaught runs the command tree in-process and turns a panic into a
// test failure naming the case.
func runCaught(t *testing.T, name string, args []string) (code int, out, errOut string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 64<<10)
			t.Fatalf("%s: kseg %s panicked: %v\n%s", name, strings.Join(args, " "), r, buf[:runtime.Stack(buf, false)])
		}
	}()
	r := clitest.Run(args...)
	return r.Code, r.Stdout, r.Stderr
}

// TestCorruptionCorpus dumps every case of the corruption corpus
// (segment/segtest/corrupt.go) and asserts, for each: the exit status (3,
// or 0 for a zero-filled tail, which is a warning); the finding's kind,
// severity, file and exact byte position, as the generator computed them
// from the healthy layout; no panic; every intact batch before and after
// the damage still reported, with the skipped range when dump had to
// resynchronise; and the heap in use below 64 MiB throughout.
func TestCorruptionCorpus(t *testing.T) {
	// Not parallel: the heap it bounds is the process's.
	c := clitest.Corpus(t)
	classes := c.Classes()
	for _, want := range []string{
		"bitflip/baseOffset", "bitflip/batchLength", "bitflip/partitionLeaderEpoch", "bitflip/magic", "bitflip/crc",
		"bitflip/attributes", "bitflip/lastOffsetDelta", "bitflip/baseTimestamp", "bitflip/maxTimestamp",
		"bitflip/producerId", "bitflip/producerEpoch", "bitflip/baseSequence", "bitflip/recordsCount",
		"crc-mismatch", "torn-tail", "zero-tail", "appended/garbage-text", "appended/garbage-binary",
		"length/huge-mid", "length/negative-mid", "length/below-14-mid", "length/below-61-mid", "length/huge-last", "length/negative-last",
		"records/count-negative", "records/count-far-above-bytes", "records/bad-varint-length",
		"records/bad-varlong-timestamp-delta", "records/codec-id-5", "records/codec-id-6", "records/codec-id-7",
		"compressed-truncated/gzip", "compressed-truncated/snappy", "compressed-truncated/lz4", "compressed-truncated/zstd",
		"decompression-bomb/gzip", "decompression-bomb/snappy", "decompression-bomb/lz4", "decompression-bomb/zstd",
		"lz4-dependent-blocks", "snappy-bad-chunk-length/huge", "snappy-bad-chunk-length/negative",
		"index-length", "timeindex-length", "index-entry-past-eof", "index-out-of-order", "timeindex-out-of-order",
		"snapshot-bad-crc", "snapshot-bad-version", "txnindex-bad-version/entry-0", "txnindex-bad-version/entry-1",
	} {
		if !slices.Contains(classes, want) {
			t.Errorf("the corpus has no %s case", want)
		}
	}
	torn := 0
	for _, cc := range c.Cases {
		if cc.Class == "torn-tail" {
			torn++
		}
	}
	t.Logf("%d cases (%d torn tails, one per byte of the last batch), %d classes", len(c.Cases), torn, len(classes))

	root := t.TempDir()
	runtime.GC()
	heap := testkit.StartHeapSampler(time.Millisecond)
	start := time.Now()
	for i := range c.Cases {
		cc := &c.Cases[i]
		dir, err := c.Write(cc, filepath.Join(root, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"dump", "-o", "json", "--deep", "--verify-index", "--index-sanity-check",
			"--max-decompressed-bytes", strconv.Itoa(segtest.CorpusMaxDecompressed), filepath.Join(dir, cc.Target)}
		code, out, errOut := runCaught(t, cc.Name, args)
		wantExit := ui.ExitFindings
		if cc.Expect.Severity == segtest.SeverityWarning {
			wantExit = ui.ExitOK
		}
		d := parseCorpusDump(t, out)
		if code != wantExit {
			t.Errorf("%s: exit %d, want %d\n%sstderr: %s", cc.Name, code, wantExit, d, errOut)
			continue
		}
		e := cc.Expect
		if !d.has(e.Kind, e.File, e.Position, e.Severity) {
			t.Errorf("%s: no %s %s finding in %s at position %d; findings:\n%s", cc.Name, e.Severity, e.Kind, e.File, e.Position, d)
		}
		if len(cc.Good) > 0 {
			got := d.batches[e.File]
			for _, p := range cc.Good {
				if !slices.Contains(got, p) {
					t.Errorf("%s: the intact batch at %d of %s is not reported (batches at %v)", cc.Name, p, e.File, got)
				}
			}
		}
		if cc.Skipped != nil {
			ok := false
			for _, f := range d.findings {
				if f.Kind == segtest.KindSkippedBytes && f.Position != nil && *f.Position == cc.Skipped[0] && f.To == cc.Skipped[1] {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s: no skipped-bytes finding for [%d, %d); findings:\n%s", cc.Name, cc.Skipped[0], cc.Skipped[1], d)
			}
		}
	}
	peak := heap.Stop()
	elapsed := time.Since(start)
	t.Logf("dumped %d cases in %v; peak heap in use %.1f MiB", len(c.Cases), elapsed.Round(time.Millisecond), float64(peak)/(1<<20))
	if peak >= corpusHeapLimit {
		t.Errorf("heap in use peaked at %d bytes, want < %d", peak, corpusHeapLimit)
	}
}

// TestCorruptionCorpusNoResync: with --no-resync (and in kafka output)
// dump stops at structural damage as the broker does: the batches after
// it are not reported, and the damage keeps its scanner classification.
func TestCorruptionCorpusNoResync(t *testing.T) {
	t.Parallel()
	c := clitest.Corpus(t)
	root := t.TempDir()
	n := 0
	for i := range c.Cases {
		cc := &c.Cases[i]
		if cc.Skipped == nil {
			continue
		}
		n++
		dir, err := c.Write(cc, filepath.Join(root, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		code, out, _ := runCaught(t, cc.Name, []string{"dump", "-o", "json", "--no-resync", filepath.Join(dir, cc.Target)})
		d := parseCorpusDump(t, out)
		if code != ui.ExitFindings {
			t.Errorf("%s: exit %d", cc.Name, code)
		}
		if got := d.batches[cc.Expect.File]; slices.Contains(got, cc.Skipped[1]) {
			t.Errorf("%s: --no-resync still read the batch at %d", cc.Name, cc.Skipped[1])
		}
		for _, f := range d.findings {
			if f.Kind == segtest.KindSkippedBytes {
				t.Errorf("%s: --no-resync reported skipped bytes", cc.Name)
			}
		}
		// kafka-dump-log's output never shows the batches past the damage,
		// except after a batch whose magic is above 2, which
		// FileLogInputStream reads as a v2 batch.
		_, kout, _ := runCaught(t, cc.Name, []string{"dump", "-o", "kafka", filepath.Join(dir, cc.Target)})
		if raw, err := os.ReadFile(filepath.Join(dir, cc.Target)); err == nil && int64(len(raw)) > cc.Skipped[0]+16 && int8(raw[cc.Skipped[0]+16]) > 2 {
			if !strings.Contains(kout, "position: "+strconv.FormatInt(cc.Skipped[0], 10)+" ") {
				t.Errorf("%s: kafka output did not read the batch of magic %d as v2", cc.Name, int8(raw[cc.Skipped[0]+16]))
			}
		} else if strings.Contains(kout, "position: "+strconv.FormatInt(cc.Skipped[1], 10)+" ") {
			t.Errorf("%s: kafka output read past the damage", cc.Name)
		}
		if !strings.Contains(kout, "Log starting offset") {
			t.Errorf("%s: kafka output: %q", cc.Name, kout)
		}
	}
	if n == 0 {
		t.Fatal("no resynchronisation case in the corpus")
	}
}
