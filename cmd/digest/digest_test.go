package digest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/verifychain"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// digestOf runs kseg digest args... PATH into a file and returns it.
func digestOf(t *testing.T, path string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(path)+".digest")
	a := append(append([]string{"digest", "--out", out}, args...), path)
	if code, stdout, stderr := clitest.Exec(t, a...); code != ui.ExitOK {
		t.Fatalf("kseg %s: exit %d\n%s%s", strings.Join(a, " "), code, stdout, stderr)
	}
	return out
}

// chainEdges runs verify-chain --output json and returns its exit status
// and edge lines.
func chainEdges(t *testing.T, args ...string) (int, []verifychain.EdgeJSON, string) {
	t.Helper()
	code, out, stderr := clitest.Exec(t, append([]string{"verify-chain", "--output", "json"}, args...)...)
	return code, clitest.TypedLines[verifychain.EdgeJSON](t, out, "edge"), stderr
}

func TestDigestCLI(t *testing.T) {
	src, dst := clitest.Mirrored(t, -1)
	code, out, stderr := clitest.Exec(t, "digest", dst)
	if code != ui.ExitOK || !strings.HasPrefix(out, "kseg-digest 1 xxh3-128 kseg ") || !strings.Contains(stderr, "Digest of mirror-0") {
		t.Fatalf("exit %d, stdout %.40q, stderr %s", code, out, stderr)
	}
	code, out, _ = clitest.Exec(t, "digest", "--quiet", "--hash", "sha256", dst)
	if code != ui.ExitOK || !strings.HasPrefix(out, "kseg-digest 1 sha256 kseg ") {
		t.Fatalf("sha256: exit %d, %.40q", code, out)
	}
	// Usage: a terminal for stdout, an unknown hash, a file, a log
	// directory without --out, --from with a log directory.
	s, _, errb := ui.TestStreams()
	s.OutTTY = true
	if code := clitest.RunStreams(t.Context(), s, "digest", dst); code != ui.ExitUsage || !strings.Contains(errb.String(), "binary") {
		t.Errorf("stdout a terminal: exit %d: %s", code, errb.String())
	}
	logDir := filepath.Dir(dst)
	for _, args := range [][]string{
		{"digest", "--hash", "md5", dst},
		{"digest", filepath.Join(dst, "00000000000000000000.log")},
		{"digest", logDir},
		{"digest", "--from", "3", "--out", t.TempDir(), logDir},
		{"digest", "--from", "-3", dst},
		{"digest"},
	} {
		if code, _, stderr := clitest.Exec(t, args...); code != ui.ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ui.ExitUsage, stderr)
		}
	}
	// A log directory: one digest per partition.
	outDir := filepath.Join(t.TempDir(), "digests")
	if code, _, stderr := clitest.Exec(t, "digest", "--out", outDir, logDir); code != ui.ExitOK {
		t.Fatalf("log directory: exit %d: %s", code, stderr)
	}
	one := filepath.Join(outDir, "mirror-0.digest")
	if code, edges, stderr := chainEdges(t, src, one); code != ui.ExitOK || len(edges) != 1 || edges[0].Status != "in-sync" {
		t.Fatalf("verify-chain over the log directory's digest: exit %d %+v %s", code, edges, stderr)
	}
	// An interrupted kseg write pending: refused.
	testkit.WriteFile(t, filepath.Join(dst, edit.JournalName), []byte("{}"))
	if code, _, stderr := clitest.Exec(t, "digest", "--out", filepath.Join(t.TempDir(), "x"), dst); code != ui.ExitRefused || !strings.Contains(stderr, "pending") {
		t.Errorf("pending edit: exit %d: %s", code, stderr)
	}
}

// TestDigestIncremental: a digest taken while the mirror lagged, then
// continued with --from (an offset, or the earlier digest) and appended,
// reads as a digest of the whole log; a continuation whose anchor the
// earlier digest does not hold is refused, at its byte.
func TestDigestIncremental(t *testing.T) {
	src, dst := clitest.Mirrored(t, 7)
	early := digestOf(t, dst)
	if code, out, stderr := clitest.Exec(t, "mirror", "--quiet", "--segment-bytes", "400", "--backup-dir", filepath.Join(t.TempDir(), "bk"), src, dst); code != ui.ExitOK {
		t.Fatalf("mirror on: exit %d\n%s%s", code, out, stderr)
	}
	want := func(d string) {
		t.Helper()
		code, edges, stderr := chainEdges(t, src, d)
		if code != ui.ExitOK || len(edges) != 1 || edges[0].Status != "in-sync" || edges[0].DownstreamDigest == nil || edges[0].DownstreamDigest.Sections != 2 {
			t.Fatalf("verify-chain %s: exit %d %+v %s", d, code, edges, stderr)
		}
		clitest.VerifyChainOverDigests(t, []string{"verify-chain", src, dst})
	}
	// --from OFFSET, appended.
	for _, from := range []string{"3", "7", "8"} {
		code, section, stderr := clitest.Exec(t, "digest", "--quiet", "--from", from, dst)
		if code != ui.ExitOK {
			t.Fatalf("--from %s: exit %d: %s", from, code, stderr)
		}
		whole := filepath.Join(t.TempDir(), "whole.digest")
		b, _ := os.ReadFile(early)
		testkit.WriteFile(t, whole, append(b, section...))
		if from == "8" {
			// The earlier digest ends below 8: a gap the reader refuses.
			if code, _, stderr := chainEdges(t, src, whole); code != ui.ExitUsage || !strings.Contains(stderr, "byte ") {
				t.Errorf("a continuation beyond the earlier digest's end: exit %d: %s", code, stderr)
			}
			continue
		}
		want(whole)
	}
	// --from FILE.
	code, section, stderr := clitest.Exec(t, "digest", "--quiet", "--from", early, dst)
	if code != ui.ExitOK {
		t.Fatalf("--from FILE: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(early)
	whole := filepath.Join(t.TempDir(), "whole.digest")
	os.WriteFile(whole, append(b, section...), 0o644)
	want(whole)

	// The log changed below the earlier digest's end: a byte of the batch
	// the continuation is anchored on.
	other := filepath.Join(t.TempDir(), "mirror-0")
	clitest.CopyTree(t, dst, other)
	pd, _ := segment.OpenPartitionDir(other)
	log := pd.Segments[0].Log
	raw, _ := os.ReadFile(log)
	raw[len(raw)-1] ^= 0xff
	os.WriteFile(log, raw, 0o644)
	if code, _, stderr := clitest.Exec(t, "digest", "--quiet", "--from", early, other); code != ui.ExitFindings || !strings.Contains(stderr, "does not continue") {
		t.Errorf("--from FILE over a log that changed: exit %d: %s", code, stderr)
	}
}

// TestDigestBadInput: a digest cut short, garbled, of a future format, of
// another partition, hashed otherwise than the other side's: each is
// refused with what is wrong and where.
func TestDigestBadInput(t *testing.T) {
	src, dst := clitest.Mirrored(t, -1)
	good := digestOf(t, dst)
	b := testkit.ReadFile(t, good)
	bad := func(name string, content []byte, wantCode int, wants ...string) {
		t.Helper()
		p := filepath.Join(t.TempDir(), name)
		testkit.WriteFile(t, p, content)
		code, out, stderr := clitest.Exec(t, "verify-chain", src, p)
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d\n%s%s", name, code, wantCode, out, stderr)
		}
		clitest.MustContain(t, stderr, wants...)
	}
	for _, cut := range []int{len(b) - 1, len(b) - 32, len(b) / 2, 40, 12} {
		bad("truncated", b[:cut], ui.ExitUsage, "byte ", "truncated", "expected")
	}
	for _, at := range []int{len(b) / 3, len(b) / 2, len(b) - 40} {
		g := bytes.Clone(b)
		g[at] ^= 0x10
		bad("garbled", g, ui.ExitUsage, "byte ", "expected")
	}
	future := bytes.Replace(b, []byte("kseg-digest 1 "), []byte("kseg-digest 2 "), 1)
	bad("future", future, ui.ExitUsage, "byte 12", "format version 2", "this kseg reads 1")
	bad("not-a-digest", []byte("hello\n"), ui.ExitUsage, "not a kseg digest")

	// Another partition: another name, another topic id.
	otherName := filepath.Join(t.TempDir(), "other-0")
	clitest.CopyTree(t, dst, otherName)
	bad("other-name", mustRead(t, digestOf(t, otherName)), ui.ExitRefused, "refused (topic)")
	otherID := filepath.Join(t.TempDir(), "mirror-0")
	clitest.CopyTree(t, dst, otherID)
	os.WriteFile(filepath.Join(otherID, segment.PartitionMetadataName), []byte("version: 0\ntopic_id: ICEiIyQlJicoKSorLC0uLw\n"), 0o644)
	os.WriteFile(filepath.Join(src, segment.PartitionMetadataName), []byte("version: 0\ntopic_id: EBESExQVFhcYGRobHB0eHw\n"), 0o644)
	bad("other-id", mustRead(t, digestOf(t, otherID)), ui.ExitRefused, "topic id")

	// Hashed otherwise than the other side.
	if code, _, stderr := clitest.Exec(t, "verify-chain", digestOf(t, src, "--hash", "sha256"), good); code != ui.ExitUsage || !strings.Contains(stderr, "hashes") {
		t.Errorf("two hashes: exit %d: %s", code, stderr)
	}
	// stdin twice; stdin a terminal.
	if code, _, _ := clitest.Exec(t, "verify-chain", "-", "-"); code != ui.ExitUsage {
		t.Errorf("- twice: exit %d", code)
	}
	s, _, errb := ui.TestStreams()
	s.InTTY = true
	if code := clitest.RunStreams(t.Context(), s, "verify-chain", src, "-"); code != ui.ExitUsage || !strings.Contains(errb.String(), "terminal") {
		t.Errorf("stdin a terminal: exit %d: %s", code, errb.String())
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b := testkit.ReadFile(t, p)
	return b
}

// TestDigestOlder: a digest of U taken before D mirrored on is older than
// D, not diverged from it (a digest-older warning, exit 0); the same
// digest against data D already held when it was taken is
// beyond-upstream-end. Likewise a digest of D that ends below U's log
// start.
func TestDigestOlder(t *testing.T) {
	src, u := clitest.Mirrored(t, 7)
	du := digestOf(t, u)
	_, d := clitest.Mirrored(t, -1)
	_ = src
	setTimes := func(dir string, at time.Time) {
		pd, _ := segment.OpenPartitionDir(dir)
		for _, s := range pd.Segments {
			if s.Log != "" {
				os.Chtimes(s.Log, at, at)
			}
		}
	}
	setTimes(d, time.Now().Add(time.Hour))
	code, edges, stderr := chainEdges(t, du, d)
	if code != ui.ExitOK || len(edges) != 1 || edges[0].Status != "in-sync" || len(edges[0].Findings) != 1 || edges[0].Findings[0].Kind != "digest-older" {
		t.Fatalf("an older digest of U: exit %d %+v %s", code, edges, stderr)
	}
	setTimes(d, time.Now().Add(-time.Hour))
	code, edges, _ = chainEdges(t, du, d)
	if code != ui.ExitFindings || len(edges) != 1 || edges[0].Findings[0].Kind != "beyond-upstream-end" {
		t.Fatalf("D held the data before the digest: exit %d %+v", code, edges)
	}

	// D's digest ends below U's log start, which U reached later.
	_, d3 := clitest.Mirrored(t, 3)
	dd := digestOf(t, d3)
	src2, _ := clitest.Mirrored(t, 0)
	pd, _ := segment.OpenPartitionDir(src2)
	for _, f := range []string{pd.Segments[0].Log, pd.Segments[0].Index, pd.Segments[0].TimeIndex} {
		if f != "" {
			os.Remove(f)
		}
	}
	setTimes(src2, time.Now().Add(time.Hour))
	code, edges, stderr = chainEdges(t, src2, dd)
	if code != ui.ExitOK || len(edges) != 1 || !hasKind(edges[0], "digest-older") || hasKind(edges[0], "gap") {
		t.Fatalf("an older digest of D: exit %d %+v %s", code, edges, stderr)
	}
	setTimes(src2, time.Now().Add(-time.Hour))
	if code, edges, _ = chainEdges(t, src2, dd); code != ui.ExitFindings || !hasKind(edges[0], "gap") {
		t.Fatalf("U's log start moved before D's digest: exit %d %+v", code, edges)
	}
}

func hasKind(e verifychain.EdgeJSON, kind string) bool {
	for _, f := range e.Findings {
		if f.Kind == kind {
			return true
		}
	}
	return false
}

// TestMirrorDryRunAgainstDigest: mirror --dry-run plans against a digest
// of the destination (a file, or stdin) what it plans on the
// destination's disk; without --dry-run a digest is refused; a diverged
// destination exits 3 as on disk.
func TestMirrorDryRunAgainstDigest(t *testing.T) {
	src, dst := clitest.Mirrored(t, 7)
	d := digestOf(t, dst)
	_, onDisk, _ := clitest.Exec(t, "mirror", "--dry-run", "-o", "json", "--full-compare", src, dst)
	code, fromDigest, stderr := clitest.Exec(t, "mirror", "--dry-run", "-o", "json", src, d)
	if code != ui.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var a, b map[string]any
	if json.Unmarshal([]byte(onDisk), &a) != nil || json.Unmarshal([]byte(fromDigest), &b) != nil {
		t.Fatalf("json:\n%s\n%s", onDisk, fromDigest)
	}
	for _, k := range []string{"from", "to", "copiedBatches", "copiedRecords", "copiedBytes", "barriers", "newLogEndOffset", "dstLog", "srcLog", "compared", "topicId"} {
		if x, y := jsonText(a[k]), jsonText(b[k]); x != y {
			t.Errorf("%s: %s on disk, %s from the digest", k, x, y)
		}
	}
	if b["dstDigest"] == nil {
		t.Errorf("no dstDigest: %s", fromDigest)
	}
	s, out, errb := ui.TestStreams()
	s.In = bytes.NewReader(mustRead(t, d))
	if code := clitest.RunStreams(t.Context(), s, "mirror", "--dry-run", src, "-"); code != ui.ExitOK || !strings.Contains(out.String(), "Copy: offsets [") {
		t.Errorf("stdin: exit %d\n%s%s", code, out, errb)
	}
	if code, _, stderr := clitest.Exec(t, "mirror", src, d); code != ui.ExitUsage || !strings.Contains(stderr, "--dry-run") {
		t.Errorf("without --dry-run: exit %d: %s", code, stderr)
	}
	// Diverged: the destination failed over (its own barrier).
	if code, out, stderr := clitest.Exec(t, "inject-barrier", "--quiet", "--backup-dir", filepath.Join(t.TempDir(), "bk"), dst); code != ui.ExitOK {
		t.Fatalf("inject-barrier: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := clitest.Exec(t, "mirror", "--dry-run", src, digestOf(t, dst)); code != ui.ExitFindings || !strings.Contains(stderr, "diverged") {
		t.Errorf("diverged: exit %d: %s", code, stderr)
	}
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }
