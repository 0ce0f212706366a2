// Package exitcode carries a process exit code through an error chain, so that
// only main decides how the process ends while the packages below it say why.
package exitcode

import (
	"errors"
	"fmt"
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
