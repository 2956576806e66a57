package ui

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func manualProgress(s *Streams, total int64, delay time.Duration) *Progress {
	return startProgress(s, "scanning", total, 0, "", true, progressConfig{delay: delay, interval: 100 * time.Millisecond, width: 80, manual: true}, t0)
}

// TestProgressSilentWhenPiped: a piped stderr, or --quiet, gets nothing at
// All, and no goroutine is started.
func TestProgressSilentWhenPiped(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tty   bool
		quiet bool
	}{{"piped", false, false}, {"quiet on a tty", true, true}, {"quiet piped", false, true}} {
		s, _, errb := TestStreams()
		s.ErrTTY = tc.tty
		s.Env = func(k string) (string, bool) {
			if k == ProgressDelayEnv {
				return "0", true // would draw at once if enabled
			}
			return "", false
		}
		before := runtime.NumGoroutine()
		s.Quiet = tc.quiet
		p := NewProgress(s, "scanning", 100)
		if p.enabled || p.stop != nil {
			t.Errorf("%s: progress enabled", tc.name)
		}
		if runtime.NumGoroutine() > before {
			t.Errorf("%s: a goroutine was started", tc.name)
		}
		p.Add(50)
		p.ItemDone()
		p.Done()
		p.Done()
		if errb.Len() != 0 {
			t.Errorf("%s: stderr %q, want nothing", tc.name, errb.String())
		}
	}
}

// TestProgressDelayAndThrottle drives the clock by hand: nothing before
// the delay, then at most one redraw per interval (10 a second), and only
// when the text changes.
func TestProgressDelayAndThrottle(t *testing.T) {
	s, _, errb := TTYTestStreams(false)
	p := manualProgress(s, 1<<30, time.Second)
	draws := map[int]int{} // second → redraws in it
	for ms := 0; ms < 3000; ms++ {
		p.Add(1 << 16) // changes every millisecond
		if p.tick(t0.Add(time.Duration(ms) * time.Millisecond)) {
			draws[ms/1000]++
		}
	}
	if draws[0] != 0 {
		t.Errorf("%d redraws in the first second, want none (the delay)", draws[0])
	}
	for sec := 1; sec < 3; sec++ {
		if draws[sec] < 9 || draws[sec] > 10 {
			t.Errorf("second %d: %d redraws, want 9..10", sec, draws[sec])
		}
	}
	// Unchanged text is not redrawn.
	n := strings.Count(errb.String(), "\r")
	p.tick(t0.Add(10 * time.Second))
	p.tick(t0.Add(11 * time.Second)) // same bytes, but ETA/rate moved: may draw
	p.tick(t0.Add(11 * time.Second))
	if got := strings.Count(errb.String(), "\r"); got > n+2 {
		t.Errorf("%d redraws for two ticks", got-n)
	}
	p.Done()
	if !strings.HasSuffix(errb.String(), "\r\x1b[K") {
		t.Errorf("the line is not erased at the end: %q", tail(errb.String()))
	}
}

// TestProgressLine checks the text: bytes of total, percentage, items,
// rate and ETA, cut to the terminal width.
func TestProgressLine(t *testing.T) {
	s, _, _ := TTYTestStreams(false)
	p := manualProgress(s, 100<<20, time.Second)
	p.SetItems(12, "partitions")
	p.Add(25 << 20)
	for i := 0; i < 3; i++ {
		p.ItemDone()
	}
	got := p.line(t0.Add(5 * time.Second))
	want := "scanning 25.0 MiB / 100.0 MiB  25%  3/12 partitions  5.0 MiB/s  ETA 15s"
	if got != want {
		t.Errorf("line\n got %q\nwant %q", got, want)
	}
	p.cfg.width = 20
	if got := p.line(t0.Add(5 * time.Second)); got != want[:19] {
		t.Errorf("cut to 20 columns: %q", got)
	}
	p.Done()
}

// TestProgressRoutesOutputAroundLine: data on stdout and diagnostics on
// stderr written while the line is up erase it first; the line is redrawn
// only at the start of a line, never over a partial line of data.
func TestProgressRoutesOutputAroundLine(t *testing.T) {
	s, out, errb := TTYTestStreams(true)
	realErr := errb
	p := manualProgress(s, 1000, 0) // delay 0: drawn at once
	if !strings.HasPrefix(realErr.String(), "\rscanning 0 B / 1000 B  0%") {
		t.Fatalf("no initial draw: %q", realErr.String())
	}
	s.Err.Write([]byte("kseg: warning\n"))
	if !strings.Contains(realErr.String(), "0%\x1b[K\r\x1b[Kkseg: warning\n") {
		t.Errorf("the warning did not erase the line first: %q", realErr.String())
	}
	p.Add(500)
	if !p.tick(t0.Add(time.Second)) {
		t.Errorf("no redraw after the warning")
	}
	s.Out.Write([]byte("partial line"))
	p.Add(100)
	if p.tick(t0.Add(2 * time.Second)) {
		t.Errorf("redrawn over a partial line of stdout")
	}
	s.Out.Write([]byte(" ends\n"))
	if !p.tick(t0.Add(3 * time.Second)) {
		t.Errorf("not redrawn once stdout is at a line start")
	}
	p.Done()
	if out.String() != "partial line ends\n" {
		t.Errorf("stdout changed: %q", out.String())
	}
	if s.Out != out || s.Err != errb {
		t.Errorf("Done did not restore the streams")
	}
	if !strings.HasSuffix(realErr.String(), "\r\x1b[K") {
		t.Errorf("not erased at the end: %q", tail(realErr.String()))
	}
}

// TestProgressNoGoroutineLeak: the ticker goroutine ends with Done, and
// Done is safe to call twice.
func TestProgressNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		s, _, _ := TTYTestStreams(false)
		p := startProgress(s, "scanning", 10, 0, "", true, progressConfig{delay: 0, interval: time.Millisecond}, time.Now())
		p.Add(5)
		time.Sleep(2 * time.Millisecond)
		p.Done()
		p.Done()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Done, %d before", n, before)
	}
}

// TestProgressTickerDraws: with the real ticker, a run longer than the
// delay draws the line, and Done erases it.
func TestProgressTickerDraws(t *testing.T) {
	s, _, errb := TTYTestStreams(false)
	s.Env = func(k string) (string, bool) {
		if k == ProgressDelayEnv {
			return "20ms", true
		}
		return "", false
	}
	p := NewProgress(s, "dumping", 1<<20)
	p.Add(1 << 19)
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(errb.String(), "dumping 512.0 KiB / 1.0 MiB  50%") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	p.Done()
	got := errb.String()
	if !strings.Contains(got, "dumping 512.0 KiB / 1.0 MiB  50%") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("stderr %q", got)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func tail(s string) string {
	if len(s) > 80 {
		return "…" + s[len(s)-80:]
	}
	return s
}
