package mirror

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment/digest"
)

// writeDigest writes a digest of dir into a temporary file.
func writeDigest(t testing.TB, dir string, h digest.Hash) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(dir)+".digest")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := digest.Write(f, dir, digest.Options{Hash: h, From: -1, Version: "test"}); err != nil {
		t.Fatalf("digest %s: %v", dir, err)
	}
	return path
}

// reportJSON is an edge report as JSON, its two nodes named u and d.
func reportJSON(t testing.TB, r *EdgeReport, u, d string) string {
	t.Helper()
	c := *r
	c.Upstream, c.Downstream = u, d
	b, err := json.MarshalIndent(&c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameOverDigests checks that VerifyEdge gives the report want (made over
// the directories u and d) with either node, or both, replaced by its
// digest: the same verdict, every finding at the same offset, file and
// byte position, with the same message. Both hashes are tried.
func sameOverDigests(t testing.TB, u, d string, o ChainOptions, want *EdgeReport) {
	t.Helper()
	w := reportJSON(t, want, u, d)
	for _, h := range []digest.Hash{digest.XXH3, digest.SHA256} {
		du, dd := writeDigest(t, u, h), writeDigest(t, d, h)
		for _, v := range [][2]string{{du, d}, {u, dd}, {du, dd}} {
			if h == digest.SHA256 && v != [2]string{du, dd} {
				continue
			}
			r, err := VerifyEdge(v[0], v[1], o)
			if err != nil {
				t.Fatalf("verify %s -> %s: %v", v[0], v[1], err)
			}
			if got := reportJSON(t, r, u, d); got != w {
				t.Fatalf("verify %s -> %s (%s) differs from the directories':\n--- directories\n%s\n--- with digests\n%s", v[0], v[1], h, w, got)
			}
		}
	}
}

// TestDigestsOfBundledPartitions: verify-chain over digests gives the
// directories' report for every bundled partition (legacy v0 and v1,
// compacted, transactional, control batches) against a copy of itself,
// and against a copy with a byte of one batch's records changed.
func TestDigestsOfBundledPartitions(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/partitions/*-0")
	if err != nil || len(dirs) < 5 {
		t.Fatalf("bundled partitions: %v %v", dirs, err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			u, d := filepath.Join(root, "a", filepath.Base(dir)), filepath.Join(root, "b", filepath.Base(dir))
			barriertest.CopyTree(t, dir, u)
			barriertest.CopyTree(t, dir, d)
			verify(t, u, d, ChainOptions{})
			es := barriertest.Entries(t, d)
			e := es[len(es)/2]
			f, err := os.OpenFile(e.Log, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			at := int64(len(e.Raw)) - 2
			if _, err := f.WriteAt([]byte{e.Raw[at] ^ 0x20}, e.Position+at); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if r := verify(t, u, d, ChainOptions{}); r.OK() {
				t.Fatalf("a changed byte not found:\n%s", findingsText(r.Findings))
			}
		})
	}
}
