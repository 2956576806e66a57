// Command ptyrun runs a command with its stderr on a terminal, for
// testdata/bench/run.sh's progress-cost target: kseg draws its progress
// line only when stderr is a terminal, so the cost of the line is a run
// under ptyrun -tty against the same run under plain ptyrun.
//
//	ptyrun [-tty] [-cols N] -- CMD ARGS...
//
// With -tty, CMD's stderr is the slave side of a new pseudo-terminal of N
// columns (80 by default) and ptyrun reads the master side, throwing the
// bytes away, as a terminal emulator would consume them. Without it, CMD's
// stderr is a pipe that ptyrun drains the same way, so that both runs pay
// for the helper alike and the difference is the progress line alone.
// stdin and stdout are ptyrun's own (run.sh's measure sends stdout to
// /dev/null). ptyrun exits with CMD's exit status.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/creack/pty"
)

func main() {
	tty := flag.Bool("tty", false, "put the command's stderr on a pseudo-terminal")
	cols := flag.Int("cols", 80, "columns of the pseudo-terminal")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: ptyrun [-tty] [-cols N] -- CMD ARGS...")
		os.Exit(2)
	}
	code, err := run(flag.Args(), *tty, *cols)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptyrun:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(args []string, tty bool, cols int) (int, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout = os.Stdin, os.Stdout
	var r io.ReadCloser // the side ptyrun drains
	var w *os.File      // the command's stderr
	var err error
	if tty {
		r, w, err = pty.Open()
		if err == nil {
			err = pty.Setsize(w, &pty.Winsize{Rows: 24, Cols: uint16(cols)})
		}
	} else {
		r, w, err = os.Pipe()
	}
	if err != nil {
		return 0, err
	}
	cmd.Stderr = w
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		// A pty master reports EIO once the last slave is closed: the end.
		_, _ = io.Copy(io.Discard, r)
	}()
	err = cmd.Start()
	w.Close() // the child holds its own copy
	if err != nil {
		r.Close()
		return 0, err
	}
	err = cmd.Wait()
	<-drained
	r.Close()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}
