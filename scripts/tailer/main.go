//go:build linux

// Command tailer is a small log agent: it follows files and, with
// -endpoint, ships every complete line as an OTLP/HTTP log record. Its
// modes reproduce the syscall storm of a log agent and its fixes:
//
//   - inotify: on every inotify event it stats every followed path (to
//     catch rotation and truncation) and reads the ones that grew; the
//     pattern that made fstat 35% of an agent's CPU.
//   - fixed: on every inotify event it reads only the file the event
//     names, and stats it only when a read finds nothing new (truncation)
//     or the event is a create or rename (rotation).
//   - poll: it does the inotify mode's work once per -interval.
//   - write: the driver; it appends lines at -rate per second.
//
// A rotated file (new inode behind the name) is read to its end before the
// new one is opened, so rename rotation loses nothing; copytruncate loses
// what was appended between the last read and the truncation, as it does
// in every agent.
//
// For checking loss and duplicate accounting, -drop-every N drops every Nth
// line of each file and -dup-every N ships every Nth line twice: known
// defects with exact counts.
//
//	tailer -mode write   -dir /tmp/logs -files 8 -rate 2000 -duration 5s
//	tailer -mode inotify -dir /tmp/logs -files 8 -duration 6s
//	tailer -mode fixed   -dir /tmp/logs -files 8 -endpoint http://127.0.0.1:4318
//	tailer -mode poll    -dir /tmp/logs -files 8 -interval 250ms -duration 6s
//
// The followers print "lines N" (lines read) and a "summary {json}" line
// with the lines read, shipped, deliberately dropped and duplicated, and
// those whose export failed; syscalls per line is the figure
// scripts/demo-profile.sh and `otelbench pipeline --syscalls` report.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

type config struct {
	mode      string
	dir       string
	files     int
	rate      int
	interval  time.Duration
	duration  time.Duration
	endpoint  string
	batch     int
	flush     time.Duration
	dropEvery int
	dupEvery  int
}

// summary is what a follower did, printed as JSON on exit.
type summary struct {
	Read       int64 `json:"read"`
	Shipped    int64 `json:"shipped"` // records sent and acknowledged, duplicates included
	Dropped    int64 `json:"dropped"`
	Duplicated int64 `json:"duplicated"`
	Failed     int64 `json:"failed"` // records whose export failed after retries
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "inotify", "inotify, fixed, poll or write")
	flag.StringVar(&c.dir, "dir", "", "directory of the followed files app-0.log .. app-N.log (required)")
	flag.IntVar(&c.files, "files", 8, "number of files followed; write appends to app-0.log")
	flag.IntVar(&c.rate, "rate", 1000, "lines per second (write)")
	flag.DurationVar(&c.interval, "interval", 250*time.Millisecond, "stat interval (poll)")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "how long to run (bounded: at most 1h)")
	flag.StringVar(&c.endpoint, "endpoint", "", "OTLP/HTTP base URL to ship lines to (default: count them only)")
	flag.IntVar(&c.batch, "batch", 1000, "ship when this many lines are pending")
	flag.DurationVar(&c.flush, "flush", 100*time.Millisecond, "ship pending lines at least this often")
	flag.IntVar(&c.dropEvery, "drop-every", 0, "defect: drop every Nth line of each file (0: none)")
	flag.IntVar(&c.dupEvery, "dup-every", 0, "defect: ship every Nth line of each file twice (0: none)")
	flag.Parse()
	if c.dir == "" || c.files < 1 || c.rate < 1 || c.duration <= 0 || c.duration > time.Hour ||
		c.batch < 1 || c.flush <= 0 || c.dropEvery < 0 || c.dupEvery < 0 {
		fmt.Fprintln(os.Stderr, "tailer: need -dir, -files >= 1, -rate >= 1, 0 < -duration <= 1h, -batch >= 1, -flush > 0")
		os.Exit(2)
	}
	var err error
	switch c.mode {
	case "write":
		err = write(c)
	case "inotify", "fixed", "poll":
		var s summary
		s, err = follow(c)
		fmt.Printf("lines %d\n", s.Read)
		b, _ := json.Marshal(s)
		fmt.Printf("summary %s\n", b)
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
