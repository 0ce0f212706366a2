//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// tail is one followed file.
type tail struct {
	path string
	f    *os.File
	ino  uint64
	off  int64
	buf  []byte
	part []byte // an incomplete last line, completed by the next read
	n    int64  // lines of this path read so far (the defects count them)
	out  *shipper
}

// check stats the path (rotation: new inode; truncation: smaller size),
// then reads what was appended. A rotated file is read to its end first.
func (t *tail) check() error {
	var st unix.Stat_t
	if err := unix.Stat(t.path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	return t.follow(st)
}

// follow reopens the path when st shows another file or a truncated one,
// and reads what is new.
func (t *tail) follow(st unix.Stat_t) error {
	if t.f == nil || st.Ino != t.ino || st.Size < t.off {
		if t.f != nil {
			if st.Ino != t.ino {
				if err := t.read(); err != nil { // the rest of the rotated file
					return err
				}
			}
			t.f.Close()
		}
		f, err := os.Open(t.path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				t.f = nil
				return nil
			}
			return err
		}
		t.f, t.ino, t.off, t.part = f, st.Ino, 0, t.part[:0]
	}
	if st.Size == t.off {
		return nil
	}
	return t.read()
}

// read reads the open file to its end and hands complete lines on.
func (t *tail) read() error {
	if t.f == nil {
		return nil
	}
	for {
		n, err := t.f.Read(t.buf)
		t.off += int64(n)
		t.lines(t.buf[:n])
		if err == io.EOF || n < len(t.buf) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readNamed is the fixed mode's reaction to an event on the path: read
// without a stat; stat only when nothing was new (truncated or replaced).
func (t *tail) readNamed(rotated bool) error {
	if t.f == nil || rotated {
		return t.check()
	}
	before := t.off
	if err := t.read(); err != nil {
		return err
	}
	if t.off == before {
		return t.check()
	}
	return nil
}

// lines splits b into lines, joining a partial line from the last read.
func (t *tail) lines(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.part = append(t.part, b...)
			return
		}
		line := b[:i]
		if len(t.part) > 0 {
			t.part = append(t.part, line...)
			line = t.part
		}
		t.n++
		t.out.add(line, t.n)
		t.part = t.part[:0]
		b = b[i+1:]
	}
}
