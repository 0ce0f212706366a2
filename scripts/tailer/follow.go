//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// follow runs a follower mode until -duration or SIGINT/SIGTERM, then reads
// and ships what is left.
func follow(c config) (summary, error) {
	out := newShipper(c)
	tails := make([]*tail, c.files)
	byName := map[string]*tail{}
	for i := range tails {
		tails[i] = &tail{path: path(c, i), buf: make([]byte, 64*1024), out: out}
		byName[filepath.Base(tails[i].path)] = tails[i]
	}
	checkAll := func() error {
		for _, t := range tails {
			if err := t.check(); err != nil {
				return err
			}
		}
		return nil
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	deadline := time.Now().Add(c.duration)
	err := checkAll()
	if err == nil {
		if c.mode == "poll" {
			err = pollLoop(c, stop, deadline, checkAll, out)
		} else {
			err = inotifyLoop(c, stop, deadline, checkAll, byName, out)
		}
	}
	if err == nil {
		err = checkAll()
	}
	out.ship()
	return out.sum, err
}

func pollLoop(c config, stop chan os.Signal, deadline time.Time, checkAll func() error, out *shipper) error {
	tick := time.NewTicker(min(c.interval, c.flush))
	defer tick.Stop()
	last := time.Now()
	for time.Now().Before(deadline) {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		if time.Since(last) >= c.interval {
			last = time.Now()
			if err := checkAll(); err != nil {
				return err
			}
		}
		out.tick()
	}
	return nil
}

func inotifyLoop(c config, stop chan os.Signal, deadline time.Time, checkAll func() error, byName map[string]*tail, out *shipper) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, c.dir, unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		return fmt.Errorf("watch %s: %w", c.dir, err)
	}
	evbuf := make([]byte, 64*1024)
	wait := int(min(c.flush, 100*time.Millisecond) / time.Millisecond)
	for time.Now().Before(deadline) {
		select {
		case <-stop:
			return nil
		default:
		}
		out.tick()
		// Wait at most the flush period, so that the deadline, signals and
		// pending lines are noticed.
		// A signal interrupts the poll (EINTR): loop to notice it rather than
		// fall through to a read that would wait for the next event. The fd
		// is non-blocking too, so a spurious wake-up cannot block either.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(pfd, wait); err != nil && !errors.Is(err, unix.EINTR) {
			return err
		} else if n <= 0 {
			continue
		}
		n, err := unix.Read(fd, evbuf)
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return err
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafePointer(evbuf[off:]))
			name := evbuf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if c.mode == "inotify" {
				// One check of every followed file per event: the storm.
				err = checkAll()
			} else if t := byName[cstring(name)]; t != nil {
				err = t.readNamed(ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// cstring returns the NUL-padded name of an inotify event as a string.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
