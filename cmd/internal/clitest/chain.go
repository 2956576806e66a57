package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// VerifyChainOverDigests runs the verify-chain command args again with
// each of its nodes replaced by its digest (kseg digest, then the file),
// with all of them replaced, and with the first one read from stdin ("-"),
// and requires the same exit status and the same JSON output as over the
// directories: every edge's verdict and every finding, at the same offset,
// file and byte position, with the same message. Only the nodes' names
// differ (a digest is named as given), and the description JSON adds for
// a digest node (upstreamDigest, downstreamDigest).
func VerifyChainOverDigests(t *testing.T, args []string) {
	t.Helper()
	if len(args) == 0 || args[0] != "verify-chain" {
		t.Fatalf("not a verify-chain command: %v", args)
	}
	var flags, nodes []string
	var nodeAt []int // index of each node in rest
	var rest []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--output" || a == "-o":
			i++ // replaced by --output json
		case strings.HasPrefix(a, "--output="):
		case a == "--edge" || a == "--color":
			flags = append(flags, a, args[i+1])
			i++
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
		default:
			nodeAt = append(nodeAt, len(rest))
			rest = append(rest, a)
			nodes = append(nodes, a)
		}
	}
	run := func(stdin []byte, nodeArgs []string) (int, string) {
		s, out, errb := ui.TestStreams()
		if stdin != nil {
			s.In = bytes.NewReader(stdin)
		}
		a := append(append([]string{"verify-chain", "--output", "json"}, flags...), nodeArgs...)
		code := runner(context.Background(), a, s)
		if code == ui.ExitUsage || code == ui.ExitError {
			t.Logf("kseg %s: exit %d: %s", strings.Join(a, " "), code, errb.String())
		}
		return code, out.String()
	}
	wantCode, wantOut := run(nil, rest)
	tmp := t.TempDir()
	digests := make([]string, len(nodes))
	for i, n := range nodes {
		digests[i] = filepath.Join(tmp, fmt.Sprintf("%d-%s.digest", i, filepath.Base(n)))
		if code, out, errOut := Exec(t, "digest", "--out", digests[i], n); code != ui.ExitOK {
			t.Fatalf("kseg digest %s: exit %d\n%s%s", n, code, out, errOut)
		}
	}
	names := map[string]string{"-": nodes[0]}
	for i := range nodes {
		names[digests[i]] = nodes[i]
	}
	want := normalChainJSON(t, wantOut, names)
	check := func(what string, stdin []byte, nodeArgs []string) {
		t.Helper()
		code, out := run(stdin, nodeArgs)
		if code != wantCode {
			t.Fatalf("verify-chain with %s: exit %d, want %d (as over the directories)\n%s", what, code, wantCode, out)
		}
		if got := normalChainJSON(t, out, names); got != want {
			t.Fatalf("verify-chain with %s differs from the directories':\n--- directories\n%s\n--- digests\n%s", what, want, got)
		}
	}
	for i := range nodes {
		v := append([]string(nil), rest...)
		v[nodeAt[i]] = digests[i]
		check(nodes[i]+" as a digest", nil, v)
	}
	all := append([]string(nil), digests...)
	check("every node as a digest", nil, all)
	b, err := os.ReadFile(digests[0])
	if err != nil {
		t.Fatal(err)
	}
	v := append([]string(nil), rest...)
	v[nodeAt[0]] = "-"
	check(nodes[0]+" as a digest on stdin", b, v)
}

// normalChainJSON is verify-chain's JSON output with the nodes named as
// the directories they digest, and without the digests' descriptions.
func normalChainJSON(t *testing.T, out string, names map[string]string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		for _, k := range []string{"upstream", "downstream"} {
			if s, ok := m[k].(string); ok && names[s] != "" {
				m[k] = names[s]
			}
		}
		delete(m, "upstreamDigest")
		delete(m, "downstreamDigest")
		j, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// Mirrored is a source partition (the mirror fixture, 400-byte segments)
// and a mirror of it up to upto (-1: all) in a log directory of its own.
func Mirrored(t *testing.T, upto int) (src, dst string) {
	t.Helper()
	src, dst = MirrorPair(t)
	args := []string{"mirror", "--quiet", "--segment-bytes", "400", "--backup-dir", filepath.Join(t.TempDir(), "bk")}
	if upto >= 0 {
		args = append(args, "--upto", strconv.Itoa(upto))
	}
	if code, out, stderr := Exec(t, append(args, src, dst)...); code != ui.ExitOK {
		t.Fatalf("mirror: exit %d\n%s%s", code, out, stderr)
	}
	return src, dst
}

// MirrorCopies copies orders-0 into n log directories a, b, c …: n
// partitions that are each other's exact mirrors.
func MirrorCopies(t *testing.T, n int) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for i := 0; i < n; i++ {
		d := filepath.Join(root, string(rune('a'+i)), "orders-0")
		dirs = append(dirs, Fixture(t, "partitions/orders-0", d))
	}
	return dirs
}
