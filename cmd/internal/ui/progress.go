package ui

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/kseg/kseg/segment"
)

// Progress reports long work on stderr as one line redrawn in place:
//
//	scanning 412.0 MiB / 1.2 GiB  34%  3/12 partitions  85.2 MiB/s  ETA 9s
//
// It is shown only when stderr is a terminal and --quiet is off, only once
// the work has run for about a second (short runs print nothing at all),
// is redrawn at most ten times a second, and is erased by Done. Everything
// else kseg writes to stdout or stderr while the line is up goes through
// progressWriter, which erases the line first and lets the next tick draw
// it again below the new output, so data and diagnostics are never mixed
// with it.
//
// Commands use it as
//
//	p := newProgress(s, g, "scanning", totalBytes) // before building printers
//	defer p.Done()
//	p.SetItems(len(partitions), "partitions")       // optional
//	... p.Add(n) ... p.ItemDone() ...
//
// Add and ItemDone are a single atomic add, cheap enough for any loop; the
// drawing happens on a ticker goroutine that Done stops and waits for. A
// disabled progress (piped stderr, --quiet) starts no goroutine and writes
// nothing.
type Progress struct {
	label     string
	Total     int64
	done      atomic.Int64
	items     atomic.Int64
	itemTotal atomic.Int64
	itemUnit  atomic.Pointer[string]

	enabled bool
	s       *Streams
	// Err is the real stderr; Streams.Err/Out are swapped for writers that
	// clear the line, and restored by Done.
	err               io.Writer
	savedOut, savedEr io.Writer

	cfg progressConfig

	mu       sync.Mutex
	start    time.Time
	drawn    bool   // a progress line is on the screen
	last     string // its text
	lastDraw time.Time
	// Whether the last byte written to stdout / stderr ended a line: the
	// Progress line is only drawn at the start of a line, so a partial
	// line of data is never overwritten.
	outAtLineStart, errAtLineStart bool

	stop     chan struct{}
	exited   chan struct{}
	doneOnce sync.Once
}

// progressConfig are the knobs tests turn.
type progressConfig struct {
	// delay before the first draw: work that finishes sooner prints
	// nothing. KSEG_PROGRESS_DELAY (a Go duration) overrides the default
	// of one second; 0 draws at once (the end-to-end tests use it).
	delay time.Duration
	// interval between redraws (at most 1/interval redraws a second).
	interval time.Duration
	// Width the line is cut to (terminal columns); 0 means 80.
	width int
	// manual: no ticker goroutine; the test calls tick.
	manual bool
}

const (
	progressDefaultDelay    = time.Second
	progressDefaultInterval = 100 * time.Millisecond // ≤ 10 redraws a second
	ProgressDelayEnv        = "KSEG_PROGRESS_DELAY"
)

// NewProgress starts a progress line for work of total bytes (0 when
// unknown). It is a no-op unless stderr is a terminal and --quiet is off.
// Create it before anything captures s.Out or s.Err (printers, bufio
// writers), so their output is routed around the line.
func NewProgress(s *Streams, label string, total int64) *Progress {
	return NewItemProgress(s, label, total, 0, "")
}

// NewItemProgress is newProgress for work that is also counted in items
// (partitions, files): the line shows "3/12 partitions" as ItemDone is
// called.
func NewItemProgress(s *Streams, label string, total, items int64, unit string) *Progress {
	cfg := progressConfig{delay: progressDefaultDelay, interval: progressDefaultInterval}
	if s != nil {
		cfg.width = s.ErrWidth
		if s.Env != nil {
			if v, ok := s.Env(ProgressDelayEnv); ok {
				if d, err := time.ParseDuration(v); err == nil && d >= 0 {
					cfg.delay = d
				}
			}
		}
	}
	enabled := s != nil && s.ErrTTY && !s.Quiet
	return startProgress(s, label, total, items, unit, enabled, cfg, time.Now())
}

func startProgress(s *Streams, label string, total, items int64, unit string, enabled bool, cfg progressConfig, now time.Time) *Progress {
	p := &Progress{label: label, Total: total}
	if items > 0 {
		p.SetItems(items, unit)
	}
	if !enabled {
		return p
	}
	if cfg.interval <= 0 {
		cfg.interval = progressDefaultInterval
	}
	p.enabled, p.s, p.cfg, p.start = true, s, cfg, now
	p.err = s.Err
	p.outAtLineStart, p.errAtLineStart = true, true
	p.savedOut, p.savedEr = s.Out, s.Err
	s.Err = &progressWriter{p: p, w: s.Err, atLineStart: &p.errAtLineStart}
	if s.OutTTY {
		// stdout on the same terminal: its lines must not be appended to
		// the progress line either.
		s.Out = &progressWriter{p: p, w: s.Out, atLineStart: &p.outAtLineStart}
	}
	if cfg.delay <= 0 {
		p.tick(now)
	}
	if !cfg.manual {
		p.stop, p.exited = make(chan struct{}), make(chan struct{})
		go p.run()
	}
	return p
}

// Add records n more bytes done.
func (p *Progress) Add(n int64) { p.done.Add(n) }

// SetItems sets the count of items (partitions, files) the work is made of.
func (p *Progress) SetItems(total int64, unit string) {
	p.itemTotal.Store(total)
	p.itemUnit.Store(&unit)
}

// Count is what Add has counted so far.
func (p *Progress) Count() int64 { return p.done.Load() }

// ItemDone records one more item done.
func (p *Progress) ItemDone() { p.items.Add(1) }

// Done stops the ticker, waits for it and erases the line. It may be
// called more than once.
func (p *Progress) Done() {
	if !p.enabled {
		return
	}
	p.doneOnce.Do(func() {
		if p.stop != nil {
			close(p.stop)
			<-p.exited
		}
		p.mu.Lock()
		p.clearLocked()
		p.s.Out, p.s.Err = p.savedOut, p.savedEr
		p.mu.Unlock()
	})
}

func (p *Progress) run() {
	defer close(p.exited)
	t := time.NewTicker(p.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.tick(now)
		}
	}
}

// tick draws the line if it is time to: the delay has passed, the last
// draw is at least one interval old, both streams are at the start of a
// line and the text changed. It reports whether it drew.
func (p *Progress) tick(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.start) < p.cfg.delay {
		return false
	}
	if p.drawn && now.Sub(p.lastDraw) < p.cfg.interval {
		return false
	}
	if !p.outAtLineStart || !p.errAtLineStart {
		return false
	}
	line := p.line(now)
	if p.drawn && line == p.last {
		return false
	}
	// \r to the start of the line, the text, then erase whatever a longer
	// previous text left to the right.
	io.WriteString(p.err, "\r"+line+"\x1b[K")
	p.drawn, p.last, p.lastDraw = true, line, now
	return true
}

// clearLocked erases the line if one is drawn.
func (p *Progress) clearLocked() {
	if p.drawn {
		io.WriteString(p.err, "\r\x1b[K")
		p.drawn = false
	}
}

// line is the text of the progress line at now, cut to the terminal width
// (a line that wrapped could not be redrawn with \r).
func (p *Progress) line(now time.Time) string {
	done := p.done.Load()
	var b strings.Builder
	b.WriteString(p.label)
	b.WriteByte(' ')
	b.WriteString(HumanBytes(done))
	if p.Total > 0 {
		pct := done * 100 / p.Total
		if pct > 100 {
			pct = 100
		}
		fmt.Fprintf(&b, " / %s  %d%%", HumanBytes(p.Total), pct)
	}
	if it := p.itemTotal.Load(); it > 0 {
		unit := ""
		if u := p.itemUnit.Load(); u != nil {
			unit = " " + *u
		}
		fmt.Fprintf(&b, "  %d/%d%s", p.items.Load(), it, unit)
	}
	if el := now.Sub(p.start); el >= 500*time.Millisecond && done > 0 {
		rate := float64(done) / el.Seconds()
		fmt.Fprintf(&b, "  %s/s", HumanBytes(int64(rate)))
		if p.Total > done && rate > 0 {
			eta := time.Duration(float64(p.Total-done) / rate * float64(time.Second))
			fmt.Fprintf(&b, "  ETA %s", eta.Round(time.Second))
		}
	}
	width := p.cfg.width
	if width <= 0 {
		width = 80
	}
	s := b.String()
	// Leave the last column free: a character there makes some terminals
	// wrap at once.
	if utf8.RuneCountInString(s) > width-1 {
		r := []rune(s)
		s = string(r[:max(width-1, 0)])
	}
	return s
}

// progressWriter is Streams.Out or Streams.Err while a progress line may
// be on the screen: it erases the line before passing the bytes on.
type progressWriter struct {
	p           *Progress
	w           io.Writer
	atLineStart *bool
}

func (pw *progressWriter) Write(b []byte) (int, error) {
	pw.p.mu.Lock()
	defer pw.p.mu.Unlock()
	pw.p.clearLocked()
	n, err := pw.w.Write(b)
	if n > 0 {
		*pw.atLineStart = b[n-1] == '\n'
	}
	return n, err
}

// HumanBytes renders n in binary units: 512 B, 1.5 KiB, 12.3 MiB.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// NewLogProgress starts a progress line for work that reads the .log
// segments of the partition directories dirs once (a replay, a
// comparison): its total is their size, and with items the line also
// counts partitions. The directories are only listed when the line can be
// shown at all. Feed it through Add (or psm.Options.Progress = p.Add when
// p.Enabled()).
func NewLogProgress(s *Streams, label string, dirs []string, items bool) *Progress {
	if !progressShown(s) {
		return NewProgress(s, label, 0) // disabled: nothing listed, no goroutine
	}
	n := int64(0)
	if items && len(dirs) > 1 {
		n = int64(len(dirs))
	}
	return NewItemProgress(s, label, LogBytes(dirs...), n, "partitions")
}

// progressShown: a progress line can be drawn (stderr is a terminal and
// --quiet is off).
func progressShown(s *Streams) bool {
	return s != nil && s.ErrTTY && !s.Quiet
}

// LogBytes is the size of the .log segments of the partition directories
// dirs (those that cannot be listed count 0).
func LogBytes(dirs ...string) int64 {
	var total int64
	for _, dir := range dirs {
		pd, err := segment.OpenPartitionDir(dir)
		if err != nil {
			continue
		}
		for _, sg := range pd.Segments {
			if st, err := os.Stat(sg.Log); sg.Log != "" && err == nil {
				total += st.Size()
			}
		}
	}
	return total
}

// StepProgress runs one step of a command (a plan, an apply, a
// comparison) under a progress line labelled label: work gets the
// callback a domain package's Options.Progress takes, nil when no line
// can be shown (so that the domain skips its bookkeeping), and the line
// is erased before stepProgress returns, before anything is printed.
// Total is asked for only when the line is shown (0: not known; the line
// then counts bytes and their rate).
func StepProgress[T any](s *Streams, label string, total func() int64, work func(progress func(int64)) (T, error)) (T, error) {
	if !progressShown(s) {
		return work(nil)
	}
	p := NewProgress(s, label, total())
	defer p.Done()
	return work(p.Add)
}

// Enabled reports whether the line can be shown (stderr a terminal, no
// --quiet): work feeding it can skip its bookkeeping otherwise.
func (p *Progress) Enabled() bool { return p.enabled }
