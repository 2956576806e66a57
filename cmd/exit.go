package cmd

import (
	"errors"
	"fmt"
)

// Exit codes, the same for every command (documented under EXIT STATUS in
// each command's help).
const (
	ExitOK       = 0 // clean
	ExitError    = 1 // operational error (I/O, bad file system state)
	ExitUsage    = 2 // bad flags or arguments
	ExitFindings = 3 // corruption, mismatch, anomaly, verification failure
	ExitRefused  = 4 // refused to act (a broker holds the directory, …)
)

const exitStatusHelp = `
EXIT STATUS
  0  clean: nothing wrong was found
  1  error: an I/O or operational error (a path that does not exist or
     cannot be read; in a log directory the others are still read)
  2  usage: bad flags or arguments (a path that is not what the command
     takes: a file for a directory, a directory with no .log segment), or
     a question the input cannot answer (an offset past the log end, a
     group, topic or transactional id that is not there)
  3  findings: corruption (an invalid batch), a mismatch or an anomaly was
     reported
  4  refused: the command would not act (e.g. a broker holds the directory)
  Several at once: 1 before 2 before 3.
`

// exitError carries an exit code up to Main. Its message (if any) has
// already been printed when silent is true.
type exitError struct {
	code   int
	err    error
	silent bool
	// noHelp: a usage error about what the input holds, not how the
	// command was written: no pointer to --help.
	noHelp bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a usage error (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// findingsExit reports that findings were already rendered (exit 3).
func findingsExit() error { return &exitError{code: ExitFindings, silent: true} }

// unansweredf is the exit of a question the input cannot answer (exit 2,
// README "Exit status"): an offset past the log end, a group, topic or
// transactional id that does not exist there or lives on a disk not given,
// a view whose internal topic is not in the directories. What could be
// answered is printed first; msg (when not empty) says what could not.
func unansweredf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...), noHelp: true}
}

// refusedf refuses to act (exit 4).
func refusedf(format string, args ...any) error {
	return &exitError{code: ExitRefused, err: fmt.Errorf(format, args...)}
}

// exitCode maps an error returned by a command to the process exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitError
}
