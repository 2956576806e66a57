package ui

import (
	"errors"
	"fmt"
)

// Exit codes, the same for every command (documented under EXIT STATUS in
// Each command's help).
const (
	ExitOK       = 0 // clean
	ExitError    = 1 // operational error (I/O, bad file system state)
	ExitUsage    = 2 // bad flags or arguments
	ExitFindings = 3 // corruption, mismatch, anomaly, verification failure
	ExitRefused  = 4 // refused to act (a broker holds the directory, …)
)

const ExitStatusHelp = `
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

// ExitCodeError carries an exit code up to Main. Its message (if any) has
// already been printed when silent is true.
type ExitCodeError struct {
	Code   int
	Err    error
	Silent bool
	// NoHelp: a usage error about what the input holds, not how the
	// command was written: no pointer to --help.
	NoHelp bool
}

func (e *ExitCodeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitCodeError) Unwrap() error { return e.Err }

// UsageErrorf is a usage error (exit 2).
func UsageErrorf(format string, args ...any) error {
	return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// FindingsExit reports that findings were already rendered (exit 3).
func FindingsExit() error { return &ExitCodeError{Code: ExitFindings, Silent: true} }

// Unansweredf is the exit of a question the input cannot answer (exit 2,
// README "Exit status"): an offset past the log end, a group, topic or
// transactional id that does not exist there or lives on a disk not given,
// a view whose internal topic is not in the directories. What could be
// answered is printed first; msg (when not empty) says what could not.
func Unansweredf(format string, args ...any) error {
	return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf(format, args...), NoHelp: true}
}

// Refusedf refuses to act (exit 4).
func Refusedf(format string, args ...any) error {
	return &ExitCodeError{Code: ExitRefused, Err: fmt.Errorf(format, args...)}
}

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitCodeError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitError
}
