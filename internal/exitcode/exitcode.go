// Package exitcode carries a process exit code through an error chain, so that
// only main decides how the process ends while the packages below it say why.
package exitcode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes shared by every otelbench command.
const (
	OK      = 0 // success
	Failure = 1 // the work ran and failed (or, for gates, found a regression)
	Usage   = 2 // bad flags or arguments
)

// Error wraps Err with the exit code the process should end with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// New returns err tagged with code; a nil err stays meaningful (a silent exit
// with that code, for results already reported).
func New(code int, err error) error { return &Error{Code: code, Err: err} }

// UsageError tags err as a usage error (exit 2).
func UsageError(err error) error { return New(Usage, err) }

// Usagef formats a usage error (exit 2).
func Usagef(format string, args ...any) error { return UsageError(fmt.Errorf(format, args...)) }

// Code returns the exit code for err: 0 for nil, the code of the first
// *Error in the chain, and Failure otherwise.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failure
}

// Main runs run under a context that SIGINT and SIGTERM cancel and exits the process with the
// code of its error, which Report prints: the whole of a command's main (cli/cli's ghcmd.Main).
func Main(name string, run func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	os.Exit(Report(os.Stderr, name, err))
}

// Report writes err to w as "name: err", unless there is nothing to say (a silent *Error,
// whose Err is nil, ends a run whose results are already reported), and returns its exit code:
// the one place that maps errors to exit codes.
func Report(w io.Writer, name string, err error) int {
	if err != nil && err.Error() != "" {
		if e, ok := err.(*Error); !ok || e.Err != nil {
			fmt.Fprintf(w, "%s: %v\n", name, err)
		}
	}
	return Code(err)
}
