//go:build linux

// Command tailer reproduces the syscall storm of a log agent that follows
// files: in mode inotify it reacts to every inotify event by stat-ing every
// followed path (to catch rotation and truncation) and reading the one that
// grew — the pattern that made fstat 35% of an agent's CPU; in mode poll it
// does the same work once per -interval (the fix). Mode write is the
// driver: it appends lines at -rate per second.
//
//	tailer -mode write   -dir /tmp/logs -files 8 -rate 2000 -duration 5s
//	tailer -mode inotify -dir /tmp/logs -files 8 -duration 6s
//	tailer -mode poll    -dir /tmp/logs -files 8 -interval 250ms -duration 6s
//
// The followers print "lines N" on exit; syscalls per line is the figure
// scripts/demo-profile.sh reports.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

type config struct {
	mode     string
	dir      string
	files    int
	rate     int
	interval time.Duration
	duration time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "inotify", "inotify, poll or write")
	flag.StringVar(&c.dir, "dir", "", "directory of the followed files app-0.log .. app-N.log (required)")
	flag.IntVar(&c.files, "files", 8, "number of files followed; write appends to app-0.log")
	flag.IntVar(&c.rate, "rate", 1000, "lines per second (write)")
	flag.DurationVar(&c.interval, "interval", 250*time.Millisecond, "stat interval (poll)")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "how long to run (bounded: at most 10m)")
	flag.Parse()
	if c.dir == "" || c.files < 1 || c.rate < 1 || c.duration <= 0 || c.duration > 10*time.Minute {
		fmt.Fprintln(os.Stderr, "tailer: need -dir, -files >= 1, -rate >= 1, 0 < -duration <= 10m")
		os.Exit(2)
	}
	var err error
	switch c.mode {
	case "write":
		err = write(c)
	case "inotify", "poll":
		var lines int
		lines, err = follow(c)
		fmt.Printf("lines %d\n", lines)
	default:
		err = fmt.Errorf("unknown mode %q", c.mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tailer:", err)
		os.Exit(1)
	}
}

func path(c config, i int) string { return filepath.Join(c.dir, fmt.Sprintf("app-%d.log", i)) }

// write appends numbered lines to app-0.log at c.rate per second, paced
// against the start time so that it does not drift.
func write(c config) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	for i := 1; i < c.files; i++ {
		f, err := os.OpenFile(path(c, i), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
	}
	f, err := os.OpenFile(path(c, 0), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	total := int(c.duration.Seconds() * float64(c.rate))
	for n := 0; n < total; n++ {
		if d := time.Until(start.Add(time.Duration(n) * time.Second / time.Duration(c.rate))); d > 0 {
			time.Sleep(d)
		}
		if _, err := fmt.Fprintf(f, "%s level=info msg=\"request served\" n=%d\n", time.Now().Format(time.RFC3339Nano), n); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d\n", total)
	return nil
}

// tail is one followed file.
type tail struct {
	path string
	f    *os.File
	ino  uint64
	off  int64
	buf  []byte
}

// check stats the path (rotation: new inode; truncation: smaller size),
// then reads what was appended and returns the number of complete lines.
func (t *tail) check() (int, error) {
	var st unix.Stat_t
	if err := unix.Stat(t.path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return 0, nil
		}
		return 0, err
	}
	if t.f == nil || st.Ino != t.ino || st.Size < t.off {
		if t.f != nil {
			t.f.Close()
		}
		f, err := os.Open(t.path)
		if err != nil {
			return 0, err
		}
		t.f, t.ino, t.off = f, st.Ino, 0
	}
	if st.Size == t.off {
		return 0, nil
	}
	lines := 0
	for {
		n, err := t.f.Read(t.buf)
		lines += bytes.Count(t.buf[:n], []byte{'\n'})
		t.off += int64(n)
		if err == io.EOF || n < len(t.buf) {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}

func follow(c config) (int, error) {
	tails := make([]*tail, c.files)
	for i := range tails {
		tails[i] = &tail{path: path(c, i), buf: make([]byte, 64*1024)}
	}
	checkAll := func() (int, error) {
		lines := 0
		for _, t := range tails {
			n, err := t.check()
			if err != nil {
				return lines, err
			}
			lines += n
		}
		return lines, nil
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	deadline := time.Now().Add(c.duration)
	lines, err := checkAll()
	if err != nil {
		return lines, err
	}
	if c.mode == "poll" {
		tick := time.NewTicker(c.interval)
		defer tick.Stop()
		for time.Now().Before(deadline) {
			select {
			case <-stop:
				return lines, nil
			case <-tick.C:
			}
			n, err := checkAll()
			lines += n
			if err != nil {
				return lines, err
			}
		}
		return lines, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return lines, fmt.Errorf("inotify: %w", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, c.dir, unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		return lines, fmt.Errorf("watch %s: %w", c.dir, err)
	}
	evbuf := make([]byte, 4096)
	for time.Now().Before(deadline) {
		select {
		case <-stop:
			return lines, nil
		default:
		}
		// Wait at most 100ms so that the deadline and signals are noticed.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(pfd, 100); err != nil && !errors.Is(err, unix.EINTR) {
			return lines, err
		} else if n == 0 {
			continue
		}
		n, err := unix.Read(fd, evbuf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return lines, err
		}
		// One check of every followed file per event: the storm.
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafePointer(evbuf[off:]))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			got, err := checkAll()
			lines += got
			if err != nil {
				return lines, err
			}
		}
	}
	return lines, nil
}
