package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tracee is the process under trace: one we attach to, or one we started.
// Methods must run on the goroutine that called startTracee, which locked
// its OS thread: ptrace requests must come from the thread that forked.
type tracee struct {
	pid     int
	cmd     *exec.Cmd // nil in PID mode
	pidfd   int
	stopped bool // started command held at its first instruction
	started time.Time
}

// startTracee attaches to t.PID or starts t.Command stopped right after
// execve (PTRACE_TRACEME), so that no syscall of the program escapes the
// trace. The caller must hold runtime.LockOSThread until resume.
func startTracee(t Target) (*tracee, error) {
	if len(t.Command) == 0 {
		if err := checkPID(t.ProcRoot, t.PID); err != nil {
			return nil, err
		}
		fd, err := unix.PidfdOpen(t.PID, 0)
		if err != nil {
			return nil, fmt.Errorf("open pid %d: %w", t.PID, pidErr(err))
		}
		return &tracee{pid: t.PID, pidfd: fd, started: time.Now()}, nil
	}
	cmd := exec.Command(t.Command[0], t.Command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = t.Stdin, t.Stdout, t.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", t.Command[0], err)
	}
	pid := cmd.Process.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("wait for %s to exec: %w", t.Command[0], err)
	}
	if !ws.Stopped() {
		_ = cmd.Wait()
		return nil, fmt.Errorf("start %s: exited before tracing began (status %v)", t.Command[0], ws)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = unix.PtraceDetach(pid)
		_ = cmd.Wait()
		return nil, fmt.Errorf("open pid %d: %w", pid, err)
	}
	return &tracee{pid: pid, cmd: cmd, pidfd: fd, stopped: true, started: time.Now()}, nil
}

// resume lets a started command run (PTRACE_DETACH, no signal).
func (t *tracee) resume() error {
	if !t.stopped {
		return nil
	}
	t.stopped = false
	t.started = time.Now()
	if err := unix.PtraceDetach(t.pid); err != nil {
		return fmt.Errorf("resume pid %d: %w", t.pid, err)
	}
	return nil
}

// exited reports whether the process has exited (its pidfd is readable).
func (t *tracee) exited(timeout time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(t.pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int((timeout+time.Millisecond-1)/time.Millisecond))
	if err != nil {
		return false
	}
	return n > 0
}

// wait returns when the process exits, ctx is done or d (if > 0) elapsed,
// calling tick meanwhile: first after 2 ms, then at doubling intervals up
// to maxInterval. A started program loads its shared libraries in its
// first milliseconds; reading its mappings early catches them even when it
// exits soon after.
func (t *tracee) wait(ctx context.Context, d time.Duration, maxInterval time.Duration, tick func()) {
	var deadline time.Time
	if d > 0 {
		deadline = t.started.Add(d)
	}
	const step = 50 * time.Millisecond
	interval := 2 * time.Millisecond
	next := time.Now().Add(interval)
	for ctx.Err() == nil {
		now := time.Now()
		if !deadline.IsZero() && !now.Before(deadline) {
			return
		}
		timeout := step
		if tick != nil {
			timeout = min(timeout, max(next.Sub(now), 0))
		}
		if t.exited(timeout) {
			return
		}
		if tick != nil && !time.Now().Before(next) {
			tick()
			interval = min(2*interval, maxInterval)
			next = time.Now().Add(interval)
		}
	}
}

// finish ends the tracee: a started command still running is interrupted
// (SIGINT, then SIGKILL after grace) and reaped. It returns the command's
// exit code: its status, 128+N when a signal N it did not get from us
// killed it (the shell's convention), and -1 in PID mode or when we
// interrupted it.
func (t *tracee) finish(grace time.Duration) int {
	defer unix.Close(t.pidfd)
	if t.cmd == nil {
		return -1
	}
	interrupted := false
	if t.stopped {
		_ = t.cmd.Process.Kill()
		_ = unix.PtraceDetach(t.pid)
		interrupted = true
	} else if !t.exited(0) {
		_ = t.cmd.Process.Signal(os.Interrupt)
		interrupted = true
		if !t.exited(grace) {
			_ = t.cmd.Process.Kill()
		}
	}
	err := t.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1
	}
	ws, ok := t.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		if interrupted {
			return -1
		}
		return 128 + int(ws.Signal())
	}
	return t.cmd.ProcessState.ExitCode()
}

// checkPID fails with ErrNoProcess unless pid is a live process (not a
// zombie) and a thread-group leader.
func checkPID(procRoot string, pid int) error {
	if procRoot == "" {
		procRoot = "/proc"
	}
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return fmt.Errorf("process %d: %w (did it exit? check the PID with ps)", pid, ErrNoProcess)
	}
	st, err := parseStatus(b)
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	if st.state == 'Z' || st.state == 'X' {
		return fmt.Errorf("process %d has exited (zombie): %w", pid, ErrNoProcess)
	}
	if st.tgid != pid {
		return fmt.Errorf("pid %d is a thread of process %d: give the process id (--pid %d)", pid, st.tgid, st.tgid)
	}
	return nil
}

type procStatus struct {
	state byte
	tgid  int
}

// parseStatus reads the State and Tgid fields of /proc/PID/status.
func parseStatus(b []byte) (procStatus, error) {
	var st procStatus
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		k, v, ok := strings.Cut(string(line), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if v != "" {
				st.state = v[0]
			}
		case "Tgid":
			n, err := strconv.Atoi(v)
			if err != nil {
				return st, fmt.Errorf("parse Tgid %q: %w", v, err)
			}
			st.tgid = n
		}
	}
	if st.state == 0 || st.tgid == 0 {
		return st, errors.New("parse status: no State or Tgid")
	}
	return st, nil
}

func pidErr(err error) error {
	if errors.Is(err, unix.ESRCH) {
		return ErrNoProcess
	}
	return err
}

// launch starts the target stopped, builds its trace session with attach while it cannot run
// yet, snapshots its mappings for symbolization if snapshot, lets it run and reports its pid
// to attached. ptrace requests must come from the thread that started the command: launch
// holds its thread until the target runs. On error the target is finished and the session
// closed; otherwise the caller owns both.
func launch[S interface{ close() }](t Target, procRoot string, snapshot bool, attached func(pid int),
	attach func(pid int) (S, error)) (*tracee, S, *symbolizers, error) {
	var none S
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tr, err := startTracee(t)
	if err != nil {
		return nil, none, nil, err
	}
	sess, err := attach(tr.pid)
	if err != nil {
		tr.finish(0)
		return nil, none, nil, err
	}
	syms := newSymbolizers(procRoot)
	if snapshot {
		syms.snapshot(tr.pid)
	}
	if err := tr.resume(); err != nil {
		tr.finish(0)
		sess.close()
		return nil, none, nil, err
	}
	if attached != nil {
		attached(tr.pid)
	}
	return tr, sess, syms, nil
}
