// Package validtest runs the table tests of the packages' Config.Validate methods, one subtest a
// case, with the same checks everywhere: a valid config returns nil, an invalid one an error that
// wraps what the case names (the package's ErrInvalidConfig where it has one).
package validtest

import (
	"errors"
	"testing"
)

// Invalid, as a Case's Want, accepts any error: for packages whose Validate errors wrap no
// sentinel.
var Invalid = errors.New("any error")

// Case is one config and what its Validate must return: nil for a valid config; for an invalid
// one, an error that wraps Want (errors.Is), or any error when Want is Invalid. It is an alias of
// a plain struct, so a table lists its cases positionally, as the rest of the tests do.
type Case[C any] = struct {
	Name string
	Cfg  C
	Want error
}

// Run checks every case as a subtest named after it.
func Run[C interface{ Validate() error }](t *testing.T, cases []Case[C]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			err := c.Cfg.Validate()
			switch {
			case c.Want == nil && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case c.Want != nil && err == nil:
				t.Errorf("Validate() = nil, want an error (%v)", c.Want)
			case c.Want != nil && c.Want != Invalid && !errors.Is(err, c.Want):
				t.Errorf("Validate() = %v, want it to wrap %v", err, c.Want)
			}
		})
	}
}
