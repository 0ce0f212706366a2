//go:build linux

package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/polltest"
)

// TestAllEscapesProcessNames runs fdcount --all beside a child that renames
// itself to a terminal escape sequence and a fake row: the table shows the
// name escaped, on the child's own row.
func TestAllEscapesProcessNames(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `printf '\033[31m\n1 fake' > /proc/$$/comm && sleep 30`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := strconv.Itoa(cmd.Process.Pid)
	polltest.Until(t, "the child to rename itself", func() bool {
		b, _ := os.ReadFile("/proc/" + pid + "/comm")
		return strings.HasPrefix(string(b), "\x1b")
	})
	for _, args := range [][]string{{"--all"}, {pid}, {"--threads", pid}} {
		code, stdout, _ := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if strings.ContainsRune(stdout, 0x1b) {
			t.Errorf("%v: output holds a raw ESC", args)
		}
		if !strings.Contains(stdout, pid+" ") || !strings.Contains(stdout, `\x1b[31m\n1 fake`) {
			t.Errorf("%v: got\n%s\nwant the child's row with its name escaped", args, stdout)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(line, "1 fake") {
				t.Errorf("%v: got an injected row %q", args, line)
			}
		}
	}
}
