package compare

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// server is one running server process of one round.
type server struct {
	cmd     *exec.Cmd
	addr    string
	logPath string
	log     *os.File
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done
}

// ServerError reports a server that failed to start, become ready or stay
// up, with the tail of its log.
type ServerError struct {
	Side string
	Err  error
	Log  string // tail of the server's stdout+stderr
	Path string // the full log
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("server %s: %v\n--- %s (tail) ---\n%s", e.Side, e.Err, e.Path, e.Log)
}

func (e *ServerError) Unwrap() error { return e.Err }

// freeLoopbackAddr returns a loopback address with a port the kernel just
// handed out and released. Another process could take it before the server
// binds it; a server that fails to bind then fails readiness with its log.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find free port: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", fmt.Errorf("find free port: %w", err)
	}
	return addr, nil
}

// startServer execs argv (already expanded) in dir, in its own process
// group so that signals reach its children and a Ctrl-C at the terminal
// does not, with stdout and stderr going to logPath.
func startServer(argv []string, dir, addr, logPath string) (*server, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty serve command")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create server log: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	s := &server{cmd: cmd, addr: addr, logPath: logPath, log: logf, done: make(chan struct{})}
	go func() { // owned by s: ends when the process exits; stop waits for it
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// pid returns the server's process id.
func (s *server) pid() int { return s.cmd.Process.Pid }

// exited reports whether the process has ended.
func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// waitReady waits until the server accepts a TCP connection and answers an
// HTTP request with any status, or fails when the process exits, timeout
// passes or ctx ends.
func (s *server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if s.exited() {
			return fmt.Errorf("exited before it was ready: %v", s.waitErr)
		}
		if last = s.probe(ctx, client); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("not ready after %v: %v", timeout, last)
			}
			return ctx.Err()
		case <-s.done:
		case <-tick.C:
		}
	}
}

func (s *server) probe(ctx context.Context, client *http.Client) error {
	d := net.Dialer{Timeout: 200 * time.Millisecond}
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	conn.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// stop sends SIGTERM to the server's process group, waits up to grace for
// the process to exit, then sends SIGKILL. It returns once the process has
// been reaped. The exit status is not an error: servers commonly exit
// non-zero on SIGTERM.
func (s *server) stop(grace time.Duration) {
	defer s.log.Close()
	if s.exited() {
		return
	}
	signalGroup(s.cmd.Process, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-s.done:
		// The leader is gone; clear out any children it left behind.
		signalGroup(s.cmd.Process, syscall.SIGKILL)
	case <-t.C:
		signalGroup(s.cmd.Process, syscall.SIGKILL)
		<-s.done
	}
}

// logTail returns the end of the server's log.
func (s *server) logTail() string { return fileTail(s.logPath, 4<<10) }
