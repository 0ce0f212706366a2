package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// placeholders maps {name} to its value for the agent command and config.
type placeholders map[string]string

func (p placeholders) render(s string) string {
	for k, v := range p {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// renderConfig renders the template at src into dir and returns its path.
func renderConfig(src, dir string, p placeholders) (string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("agent config: %w", err)
	}
	dst := filepath.Join(dir, "agent"+filepath.Ext(src))
	if err := os.WriteFile(dst, []byte(p.render(string(b))), 0o644); err != nil {
		return "", fmt.Errorf("agent config: %w", err)
	}
	return dst, nil
}

// agent is the process under test: one this run started, or one it was
// given by PID.
type agent struct {
	pid     int
	command []string
	cmd     *exec.Cmd     // nil when attached by PID
	exited  chan struct{} // closed when a started agent exited
	waitErr error         // set before exited is closed
	logPath string        // where its output went ("" when given a writer)
	logFile *os.File
}

// startAgent starts argv with its output to out (or to a file in work).
func startAgent(argv []string, work string, out io.Writer) (*agent, error) {
	a := &agent{command: argv, exited: make(chan struct{})}
	if out == nil {
		a.logPath = filepath.Join(work, "agent.log")
		f, err := os.Create(a.logPath)
		if err != nil {
			return nil, fmt.Errorf("agent log: %w", err)
		}
		a.logFile, out = f, f
	}
	a.cmd = exec.Command(argv[0], argv[1:]...)
	a.cmd.Stdout, a.cmd.Stderr = out, out
	prepareCmd(a.cmd)
	if err := a.cmd.Start(); err != nil {
		a.closeLog()
		return nil, fmt.Errorf("start agent %s: %w", argv[0], err)
	}
	a.pid = a.cmd.Process.Pid
	go func() { // owned: ends when the process exits; stop waits for it
		a.waitErr = a.cmd.Wait()
		close(a.exited)
	}()
	return a, nil
}

func attachAgent(pid int) (*agent, error) {
	if err := processExists(pid); err != nil {
		return nil, fmt.Errorf("agent pid %d: %w", pid, err)
	}
	return &agent{pid: pid}, nil
}

// running returns an error when a started agent has exited.
func (a *agent) running() error {
	if a.cmd == nil {
		return processExists(a.pid)
	}
	select {
	case <-a.exited:
		return fmt.Errorf("agent exited early (%v)%s", a.waitErr, a.tail())
	default:
		return nil
	}
}

// stop sends SIGTERM to a started agent (its process group), waits up to
// wait, then kills it. It returns the exit code (-1 if killed or unknown).
func (a *agent) stop(wait time.Duration) int {
	if a.cmd == nil {
		return -1
	}
	defer a.closeLog()
	select {
	case <-a.exited:
	default:
		terminate(a.cmd)
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-a.exited:
		case <-t.C:
			kill(a.cmd)
			<-a.exited
		}
	}
	if a.cmd.ProcessState == nil {
		return -1
	}
	return a.cmd.ProcessState.ExitCode()
}

func (a *agent) closeLog() {
	if a.logFile != nil {
		a.logFile.Close()
		a.logFile = nil
	}
}

// tail returns the last lines of the agent's log, for error messages.
func (a *agent) tail() string {
	if a.logPath == "" {
		return ""
	}
	b, err := os.ReadFile(a.logPath)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return "; its output ends:\n" + string(b)
}

// waitWarmup waits d for the agent to settle, failing if it exits.
func (a *agent) waitWarmup(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-a.exited:
		return a.running()
	case <-t.C:
		return a.running()
	}
}
