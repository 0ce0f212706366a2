package childtest

import (
	"io"
	"os/exec"
	"testing"
)

// TestStartEchoesAndReaps: cat echoes what the test writes, and exits once Start's cleanup
// closes its stdin: the cleanup's Wait returns, and the process state says it exited.
func TestStartEchoesAndReaps(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skipf("no cat: %v", err)
	}
	cmd := exec.Command(cat)
	t.Run("child", func(t *testing.T) {
		stdin, stdout := Start(t, cmd)
		if _, err := io.WriteString(stdin, "ready\n"); err != nil {
			t.Fatal(err)
		}
		if line, err := stdout.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("read %q, %v; want the echoed line", line, err)
		}
	})
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("after the subtest's cleanup: process state %v, want exited with 0", cmd.ProcessState)
	}
}
