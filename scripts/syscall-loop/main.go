// Command syscall-loop makes exactly N cheap syscalls of one kind, for the
// accuracy and overhead measurements of otelbench profile
// (scripts/bench-profile.sh, docs/benchmarks/profile.md).
//
//	go run ./scripts/syscall-loop -n 1000000 -call fstat
//
// It prints the wall time per syscall on stderr.
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 1000000, "number of syscalls")
	call := flag.String("call", "fstat", "syscall to make: fstat, getppid, or newfstatat")
	flag.Parse()
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
