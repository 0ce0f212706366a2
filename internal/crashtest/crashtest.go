// Package crashtest kills a child process with SIGKILL in the middle of its work, for the tests
// that check what survives a crash (the raw log's and the store's kill -9 tests).
package crashtest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// KillAfterAcks runs the test binary again with env added (the child mode the calling test
// recognises) and no test selected, reads the lines it prints as "ack <text>", kills it with
// SIGKILL once minAcks have arrived, and returns every acknowledged text, including those it
// printed just before it died. The test fails if the child exits on its own first.
func KillAfterAcks(t testing.TB, env []string, minAcks int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var acked []string
	killed := false
	for sc.Scan() {
		text, ok := strings.CutPrefix(sc.Text(), "ack ")
		if !ok {
			continue
		}
		acked = append(acked, text)
		if len(acked) == minAcks && !killed {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			killed = true
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited before %d acks (got %d): %v", minAcks, len(acked), err)
	}
	return acked
}
