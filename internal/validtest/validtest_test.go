package validtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

var errBad = errors.New("bad config")

// size is a config whose Validate refuses negatives (wrapping errBad) and, unwrapped, zero.
type size int

func (s size) Validate() error {
	switch {
	case s < 0:
		return fmt.Errorf("size %d: %w", s, errBad)
	case s == 0:
		return errors.New("size 0")
	}
	return nil
}

func TestRunPasses(t *testing.T) {
	Run(t, []Case[size]{
		{"valid", 1, nil},
		{"wraps the sentinel", -1, errBad},
		{"any error", 0, Invalid},
	})
}

// TestRunFails runs three wrong expectations in a child test process (a failing test cannot be
// observed from inside): each fails its subtest with its own message.
func TestRunFails(t *testing.T) {
	if os.Getenv("VALIDTEST_CHILD") != "" {
		Run(t, []Case[size]{
			{"valid called invalid", 1, Invalid},
			{"invalid called valid", -1, nil},
			{"wrong sentinel", 0, errBad},
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunFails$", "-test.v")
	cmd.Env = append(os.Environ(), "VALIDTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed; want its three cases to fail:\n%s", out)
	}
	for _, want := range []string{
		"--- FAIL: TestRunFails/valid_called_invalid", "Validate() = nil, want an error",
		"--- FAIL: TestRunFails/invalid_called_valid", "Validate() = size -1: bad config, want nil",
		"--- FAIL: TestRunFails/wrong_sentinel", "Validate() = size 0, want it to wrap bad config",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
}
