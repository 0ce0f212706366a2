// Package childtest starts the helper processes of tests that talk to a child over its stdin and
// stdout: the child prints when it is ready (or what it found), and exits when its stdin closes.
// The descriptor holders of procfd, the marker programs of symbolize and the traced programs of
// profile are such children.
package childtest

import (
	"bufio"
	"io"
	"os/exec"
	"testing"
)

// Start starts cmd with pipes to its stdin and stdout. When the test ends, stdin is closed (the
// child's cue to exit) and the child is waited for; the test fails now if cmd cannot start.
func Start(tb testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout *bufio.Reader) {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatalf("%s: stdin pipe: %v", cmd.Path, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("%s: stdout pipe: %v", cmd.Path, err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", cmd.Path, err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait() // its exit status is the test's business, not the cleanup's
	})
	return stdin, bufio.NewReader(out)
}
