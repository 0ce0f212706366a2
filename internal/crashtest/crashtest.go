// Package crashtest kills a child process with SIGKILL in the middle of its work, for the tests
// that check what survives a crash (the raw log's and the store's kill -9 tests).
package crashtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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

// AckEach is the child's half: it runs appendOne(g, n) from goroutines goroutines, up to
// perGoroutine times each and for at most limit (so a lost parent cannot leave the child
// running), and prints "ack TEXT" on stdout after each call that returns its TEXT and nil, the
// lines KillAfterAcks reads. A goroutine stops at its first error, which goes to stderr.
func AckEach(goroutines, perGoroutine int, limit time.Duration, appendOne func(g, n int) (string, error)) {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	deadline := time.Now().Add(limit)
	for g := range goroutines {
		wg.Go(func() {
			for n := 0; n < perGoroutine && time.Now().Before(deadline); n++ {
				text, err := appendOne(g, n)
				if err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					return
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %s\n", text)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// RunChild makes the test binary the child when env is set (KillAfterAcks sets it): it exits with
// child's code instead of running the tests. Call it first in TestMain.
func RunChild(env string, child func() int) {
	if os.Getenv(env) != "" {
		os.Exit(child())
	}
}
