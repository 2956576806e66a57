package mirror_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	barriermirror "github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/mirror"
	"github.com/kseg/kseg/segment/edit"
)

func TestMirrorCLIDryRunChangesNothing(t *testing.T) {
	src, dst := clitest.MirrorPair(t)
	root := filepath.Dir(filepath.Dir(src))
	before := clitest.WalkState(t, root)
	code, out, stderr := clitest.Exec(t, "mirror", "--dry-run", "--segment-bytes", "300", src, dst)
	if code != ui.ExitOK || !strings.Contains(out, "new partition directory") || !strings.Contains(out, "Dry run:") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	clitest.AssertSameState(t, before, root)
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("--dry-run created %s", dst)
	}
}

func TestMirrorCLIRefusesDivergedUnlessAlign(t *testing.T) {
	src, dst := clitest.Mirrored(t, 11)
	if code, out, stderr := clitest.Exec(t, "inject-barrier", "--backup-dir", filepath.Join(t.TempDir(), "2"), dst); code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	before := clitest.WalkState(t, dst)
	code, out, stderr := clitest.Exec(t, "mirror", src, dst)
	if code != ui.ExitFindings || !strings.Contains(stderr, "diverged from") || !strings.Contains(stderr, "at offset 6") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	clitest.AssertSameState(t, before, dst)

	code, out, stderr = clitest.Exec(t, "mirror", "--align", "--output", "json", "--backup-dir", filepath.Join(t.TempDir(), "3"), src, dst)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	var plan mirror.PlanJSON
	var result mirror.ResultJSON
	ls := strings.Split(strings.TrimSpace(out), "\n")
	if len(ls) != 2 || json.Unmarshal([]byte(ls[0]), &plan) != nil || json.Unmarshal([]byte(ls[1]), &result) != nil {
		t.Fatalf("want a plan and a result line:\n%s", out)
	}
	if plan.Type != "mirror-plan" || plan.Truncation == nil || plan.Truncation.Offset != 6 || plan.From != 6 || plan.To != 18 ||
		result.Type != "mirror-result" || result.Verification == nil || !result.Verification.OK {
		t.Fatalf("plan %+v\nresult %+v", plan, result)
	}
	code, out, _ = clitest.Exec(t, "verify-chain", src, dst)
	if code != ui.ExitOK || !strings.Contains(out, "in sync") {
		t.Fatalf("verify-chain after align: exit %d\n%s", code, out)
	}
	code, out, _ = clitest.Exec(t, "mirror", src, dst)
	if code != ui.ExitOK || !strings.Contains(out, "Nothing to do:") {
		t.Fatalf("a second mirror: exit %d\n%s", code, out)
	}
}

// TestMirrorCLIPendingJournal: an interrupted mirror blocks inject-barrier
// (and the other way round) until it is finished or rolled back.
func TestMirrorCLIPendingJournal(t *testing.T) {
	src, dst := clitest.MirrorPair(t)
	o := barriermirror.DefaultOptions()
	o.SegmentBytes = 300
	p, err := barriermirror.PlanMirror(src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = barriermirror.Apply(p, clitest.CrashAtCommit(filepath.Join(t.TempDir(), "b")))
	if !errors.Is(err, clitest.ErrCrash) || !edit.HasJournal(dst) {
		t.Fatalf("interrupted mirror: %v", err)
	}
	code, out, stderr := clitest.Exec(t, "inject-barrier", "--dry-run", dst)
	if code != ui.ExitRefused || !strings.Contains(stderr, "operation-pending") || !strings.Contains(stderr, "kseg mirror") {
		t.Fatalf("inject-barrier on a pending mirror: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = clitest.Exec(t, "mirror", "--rollback", dst)
	if code != ui.ExitOK || !strings.Contains(out, "Rolled back: the interrupted mirror") {
		t.Fatalf("rollback: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the rollback left %s, which the mirror created", dst)
	}
	// A finished run.
	if code, out, stderr := clitest.Exec(t, "mirror", "--segment-bytes", "300", "--backup-dir", filepath.Join(t.TempDir(), "c"), src, dst); code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = clitest.Exec(t, "dump", "--verify-index", dst)
	if code != ui.ExitOK {
		t.Fatalf("dump --verify-index on the mirror: exit %d\n%s", code, out)
	}
}

func TestMirrorCLIUsage(t *testing.T) {
	src, dst := clitest.MirrorPair(t)
	for _, args := range [][]string{
		{"mirror", src},
		{"mirror", src, dst, "extra"},
		{"mirror", "--output", "yaml", src, dst},
		{"mirror", "--upto", "-2", src, dst},
		{"mirror", "--segment-bytes", "10", src, dst},
		{"mirror", "--rollback", "--align", dst},
	} {
		if code, out, stderr := clitest.Exec(t, args...); code != ui.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s%s", args, code, ui.ExitUsage, out, stderr)
		}
	}
	if code, _, stderr := clitest.Exec(t, "mirror", src, src); code != ui.ExitRefused || !strings.Contains(stderr, "same-directory") {
		t.Errorf("mirror into itself: exit %d %s", code, stderr)
	}
	code, out, _ := clitest.Exec(t, "mirror", "--help")
	if code != ui.ExitOK || !strings.Contains(out, "EXIT STATUS") || !strings.Contains(out, "--align") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}
