//go:build linux

// Command syscall-loop makes exactly N cheap syscalls of one kind, for the
// accuracy and overhead measurements of otelbench profile
// (scripts/bench-profile.sh, docs/benchmarks/profile.md).
//
//	go run ./scripts/syscall-loop -n 1000000 -call fstat
//
// It prints the wall time per syscall on stderr. -cpu and -fifo pin the
// whole process (every thread) to a CPU at SCHED_FIFO priority, which
// shields the figure from other load, while the tracer that started it
// stays free to run elsewhere (a tracer that toggles its programs, like
// otelbench profile's latency sampling, must). The Go runtime starts
// threads before main, so the process sets its main thread and re-executes
// itself: every thread of the new image inherits the pinning.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	n := flag.Int("n", 1000000, "number of syscalls")
	call := flag.String("call", "fstat", "syscall to make: fstat, getppid, or newfstatat")
	cpu := flag.Int("cpu", -1, "pin the loop's thread to this CPU (-1: no pinning)")
	fifo := flag.Int("fifo", 0, "run the loop's thread at this SCHED_FIFO priority (0: normal)")
	flag.Parse()
	if (*cpu >= 0 || *fifo > 0) && os.Getenv(pinnedEnv) == "" {
		runtime.LockOSThread()
		if err := pin(*cpu, *fifo); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, os.Args, append(os.Environ(), pinnedEnv+"=1"))
		}
		fmt.Fprintln(os.Stderr, "re-exec pinned:", err)
		os.Exit(1)
	}
	f, err := os.Open("/dev/null")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fd := int(f.Fd())
	start := time.Now()
	switch *call {
	case "fstat":
		fstatLoop(fd, *n)
	case "getppid":
		getppidLoop(*n)
	case "newfstatat":
		statLoop(*n)
	default:
		fmt.Fprintf(os.Stderr, "unknown -call %q\n", *call)
		os.Exit(2)
	}
	d := time.Since(start)
	fmt.Fprintf(os.Stderr, "%d %s calls in %v: %.1f ns/call\n", *n, *call, d, float64(d.Nanoseconds())/float64(max(*n, 1)))
}

//go:noinline
func fstatLoop(fd, n int) {
	var st syscall.Stat_t
	for range n {
		if err := syscall.Fstat(fd, &st); err != nil {
			panic(err)
		}
	}
}

//go:noinline
func getppidLoop(n int) {
	for range n {
		syscall.Getppid()
	}
}

//go:noinline
func statLoop(n int) {
	var st syscall.Stat_t
	for range n {
		if err := syscall.Stat("/dev/null", &st); err != nil {
			panic(err)
		}
	}
}

// pinnedEnv marks the re-executed, pinned process.
const pinnedEnv = "SYSCALL_LOOP_PINNED"

// pin moves the calling thread to cpu and SCHED_FIFO priority prio.
func pin(cpu, prio int) error {
	if cpu >= 0 {
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pin to cpu %d: %w", cpu, err)
		}
	}
	if prio > 0 {
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(prio)}
		if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
			return fmt.Errorf("set SCHED_FIFO %d: %w", prio, err)
		}
	}
	return nil
}
