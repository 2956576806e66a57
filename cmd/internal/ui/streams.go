package ui

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/kseg/kseg/segment/finding"
)

// Streams carries the process's standard streams and what is known about
// the terminal behind them. Commands write data to Out and diagnostics to
// Err, never to os.Stdout directly, so tests run them in-process
// (pattern: gh pkg/iostreams).
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer

	// OutTTY / ErrTTY / InTTY: the stream is a terminal. A question is
	// asked only when In and Err are.
	OutTTY bool
	ErrTTY bool
	InTTY  bool
	// Width of the terminal in columns (0 when unknown or piped).
	Width int
	// ErrWidth is the width of the terminal behind Err (0 when unknown or
	// not a terminal); the progress line is cut to it.
	ErrWidth int
	// Env looks up environment variables (os.LookupEnv, or a map in tests).
	Env func(string) (string, bool)

	// color is resolved from --color and the environment by resolveColor.
	color bool
	// Verbose is -v/--verbose: text and table print every item of a list
	// instead of summarising it (summary.go).
	Verbose bool
	// Quiet is -q/--quiet: no progress line and no text or table
	// summaries; errors and warnings still go to Err.
	Quiet bool
	// FS, when set, is what checkInput reads instead of the OS (tests).
	FS inputFS
	// Wide is --output wide: tables print every cell whole (Width is then
	// 0) and the commands that have extra columns show them.
	Wide bool
	// Format, under --format, is Out: the JSON output's template writer,
	// flushed when the command is done (format.go).
	Format *templateWriter
}

// NewStdStreams wraps the process's streams.
func NewStdStreams() *Streams {
	s := &Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Env: os.LookupEnv}
	if term.IsTerminal(int(os.Stdout.Fd())) {
		s.OutTTY = true
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			s.Width = w
		}
	}
	s.InTTY = term.IsTerminal(int(os.Stdin.Fd()))
	if term.IsTerminal(int(os.Stderr.Fd())) {
		s.ErrTTY = true
		if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil {
			s.ErrWidth = w
		}
	}
	return s
}

// ResolveColor applies --color (auto|always|never) and the environment.
//
// --color always and --color never are the user's explicit choice and win
// over everything. With auto, in this order:
//
//  1. NO_COLOR set and non-empty: no colour (https://no-color.org: only an
//     explicit flag overrides it);
//  2. CLICOLOR_FORCE set, non-empty and not "0": colour even when piped
//     (https://bixense.com/clicolors: "no matter what" — so it beats
//     CLICOLOR=0);
//  3. CLICOLOR=0: no colour;
//  4. TERM=dumb: no colour (a terminal that cannot show escapes: Emacs
//     shell buffers, some CI consoles; termenv's ColorProfile gives it
//     Ascii, and CLICOLOR_FORCE still overrides it there too);
//  5. otherwise colour exactly when stdout is a terminal.
//
// This is termenv's precedence (EnvNoColor, EnvColorProfile), the library
// lipgloss renders through, so kseg agrees with the rest of that stack.
func (s *Streams) ResolveColor(mode string) {
	env := func(k string) string {
		if s.Env == nil {
			return ""
		}
		v, _ := s.Env(k)
		return v
	}
	switch mode {
	case "always":
		s.color = true
	case "never":
		s.color = false
	default:
		force := env("CLICOLOR_FORCE")
		switch {
		case env("NO_COLOR") != "":
			s.color = false
		case force != "" && force != "0":
			s.color = true
		case env("CLICOLOR") == "0", env("TERM") == "dumb":
			s.color = false
		default:
			s.color = s.OutTTY
		}
	}
}

// Color reports whether output may carry ANSI styling.
func (s *Streams) Color() bool { return s.color }

// Styles are the few lipgloss styles kseg uses; all render as plain text
// when colour is off.
type Styles struct {
	On                                    bool
	r                                     *lipgloss.Renderer
	Err, Warn, Info, OK, Offset, Pid, Dim lipgloss.Style
	Title                                 lipgloss.Style
}

func (s *Streams) Styles() *Styles {
	st := &Styles{On: s.color}
	if !s.color {
		return st
	}
	r := lipgloss.NewRenderer(s.Out)
	r.SetColorProfile(termenv.ANSI256)
	st.r = r
	st.Err = r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true)
	st.Warn = r.NewStyle().Foreground(lipgloss.Color("11"))
	st.Info = r.NewStyle().Foreground(lipgloss.Color("12"))
	st.OK = r.NewStyle().Foreground(lipgloss.Color("10"))
	st.Offset = r.NewStyle().Foreground(lipgloss.Color("14"))
	st.Pid = r.NewStyle().Foreground(lipgloss.Color("13"))
	st.Dim = r.NewStyle().Faint(true)
	st.Title = r.NewStyle().Bold(true)
	return st
}

func (st *Styles) Paint(style lipgloss.Style, s string) string {
	if !st.On {
		return s
	}
	return style.Render(s)
}

// Severity colours a severity word.
func (st *Styles) Severity(sev finding.Severity, text string) string {
	switch sev {
	case finding.Error:
		return st.Paint(st.Err, text)
	case finding.Warning:
		return st.Paint(st.Warn, text)
	case finding.Info:
		return st.Paint(st.Info, text)
	}
	return text
}

// WarnDiagnostics writes warnings (a plan's, a view's about files it could
// not parse, …) where diagnostics go, stderr, so that stdout holds only the
// data a script may parse. They are not silenced by -q, which silences
// Progress and summaries only: a warning is not a summary.
func WarnDiagnostics(errw io.Writer, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(errw, "kseg: warning: %s\n", EscMessage(w))
	}
}

// PadDisplay pads s with spaces to width terminal columns. fmt's %-19s
// counts bytes, so a styled label (ANSI escapes are bytes but no columns)
// or a wide character would misalign the column after it; lipgloss.Width
// counts what the terminal shows.
func PadDisplay(s string, width int) string {
	if w := lipgloss.Width(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

// InputFS is the file system checkInput reads. Streams.fsys replaces it in
// tests, so that "permission denied" is testable where the tests run as
// root (root reads a mode-000 directory).
type inputFS interface {
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
}

type osFS struct{}

func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

func (s *Streams) InputFS() inputFS {
	if s.FS != nil {
		return s.FS
	}
	return osFS{}
}

// AppendPaint appends text, styled when colour is on; without colour it
// does not allocate.
func (st *Styles) AppendPaint(dst []byte, style lipgloss.Style, text []byte) []byte {
	if !st.On {
		return append(dst, text...)
	}
	return append(dst, style.Render(string(text))...)
}
