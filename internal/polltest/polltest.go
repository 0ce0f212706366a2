// Package polltest waits, in tests, for a condition that another goroutine or process brings
// about, with a bound so that a test that never sees it fails instead of hanging.
package polltest

import (
	"testing"
	"time"
)

// Bound is how long Until waits: a liveness bound far above what a loaded machine takes, not a
// timing assertion.
const Bound = 30 * time.Second

// Until polls cond every 2 ms until it holds, and fails the test with "timed out waiting for
// what" if it does not within Bound.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Bound, what, cond)
}

// Within is Until with its own bound d.
func Within(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
