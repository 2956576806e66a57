package dump

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/scan"
	"github.com/kseg/kseg/segment/segtest"
)

// TestDumpProgressOnlyOnTTY runs dump in-process: with stderr a terminal
// and the delay at 0 the line appears and is erased; piped, stderr stays
// empty; stdout is the same either way.
func TestDumpProgressOnlyOnTTY(t *testing.T) {
	dir := clitest.TestdataDir + "/partitions"
	env := func(k string) (string, bool) {
		if k == ui.ProgressDelayEnv {
			return "0", true
		}
		return "", false
	}
	piped := clitest.Run("dump", dir+"/orders-0", dir+"/txn-0")
	if piped.Code != 0 || piped.Stderr != "" {
		t.Fatalf("piped: exit %d, stderr %q", piped.Code, piped.Stderr)
	}
	s, out, errb := ui.TTYTestStreams(false)
	s.Env = env
	if code := clitest.RunStreams(t.Context(), s, "dump", dir+"/orders-0", dir+"/txn-0"); code != 0 {
		t.Fatalf("tty: exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(errb.String(), "\rdumping 0 B / ") || !strings.Contains(errb.String(), "0/2 partitions") || !strings.HasSuffix(errb.String(), "\r\x1b[K") {
		t.Errorf("tty stderr %q", errb.String())
	}
	if out.String() != piped.Stdout {
		t.Errorf("stdout differs with a progress line on stderr")
	}
	s, _, errb = ui.TTYTestStreams(false)
	s.Env = env
	if code := clitest.RunStreams(t.Context(), s, "-q", "dump", dir+"/orders-0"); code != 0 || errb.String() != "" {
		t.Errorf("-q on a tty: exit %d, stderr %q", code, errb.String())
	}
}

// gateWriter is a stdout that lets one Write through per token on next.
type gateWriter struct{ next chan struct{} }

func (g gateWriter) Write(p []byte) (int, error) { <-g.next; return len(p), nil }

// TestDumpProgressMovesWithinSegment: on a real terminal (a pty), the
// progress line of a dump of one large segment shows a percentage between
// 0 and 100 while that segment is being read: it counts bytes scanned, not
// files finished. stdout is a gate, so the dump advances only as the test
// lets it, and the test waits for the line to show where the dump is.
func TestDumpProgressMovesWithinSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bench-0")
	clitest.Mkdir(t, dir)
	f, err := os.Create(filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := segtest.LargeSegment(f, 12<<20, segtest.LargeOptions{Seed: 9}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var shown ui.SyncBuffer
	go io.Copy(&shown, ptmx)

	gate := gateWriter{next: make(chan struct{})}
	s, _, _ := ui.TestStreams()
	s.Out, s.Err = gate, tty
	s.ErrTTY, s.ErrWidth = term.IsTerminal(int(tty.Fd())), 100
	s.Env = func(k string) (string, bool) { return "0", k == ui.ProgressDelayEnv }
	if !s.ErrTTY {
		t.Fatal("the pty's slave is not a terminal")
	}
	o := testDumpOptions(t, "json", "--print-data")
	files, _, err := scan.Collect([]string{dir}, false, nil)
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v, %v", files, err)
	}
	prog := newDumpProgress(s, files)
	st := newDumpRun(s, o, 1, prog) // serial: the scan moves with the output
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer prog.Done()
		st.Files(context.Background(), files, 0)
		st.Printer().Close()
	}()
	total := prog.p.Total
	for moved := false; !moved; {
		select {
		case gate.next <- struct{}{}:
		case <-done:
			t.Fatalf("the dump ended without the line showing a percentage between 0 and 100; the terminal showed %q", lastOf(shown.String()))
		}
		pct := prog.p.Count() * 100 / total
		if pct <= 0 || pct >= 100 {
			continue
		}
		// The dump waits at the gate: the ticker draws where it is.
		want := fmt.Sprintf(" / %s  %d%%", ui.HumanBytes(total), pct)
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(shown.String(), want); {
			if time.Now().After(deadline) {
				t.Fatalf("the line never showed %q; the terminal showed %q", want, lastOf(shown.String()))
			}
			time.Sleep(5 * time.Millisecond)
		}
		moved = true
	}
	for {
		select {
		case gate.next <- struct{}{}:
			continue
		case <-done:
		}
		break
	}
}

// lastOf is the end of what a terminal showed, for a failure message.
func lastOf(s string) string {
	if len(s) > 80 {
		return "…" + s[len(s)-80:]
	}
	return s
}
