//go:build linux

// Command fdscan counts its own open file descriptors -n times, either by
// listing /proc/self/fd (mode readdir: openat, getdents64 until empty,
// close) or by the fast path of Linux 6.2+, where stat("/proc/self/fd")
// reports the number of open fds in st_size (mode stat: one newfstatat).
// scripts/demo-profile.sh profiles both to show the syscall difference.
//
//	fdscan -mode readdir -fds 1000 -n 2000
//	fdscan -mode stat    -fds 1000 -n 2000
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	mode := flag.String("mode", "readdir", "readdir or stat")
	fds := flag.Int("fds", 1000, "extra fds to hold open (at most 15000)")
	n := flag.Int("n", 2000, "times to count (at most 10,000,000)")
	flag.Parse()
	if *fds < 0 || *fds > 15000 || *n < 1 || *n > 10_000_000 {
		fmt.Fprintln(os.Stderr, "fdscan: want 0 <= -fds <= 15000 and 1 <= -n <= 10000000")
		os.Exit(2)
	}
	for range *fds {
		if _, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			fmt.Fprintln(os.Stderr, "fdscan: open:", err)
			os.Exit(1)
		}
	}
	count := countReaddir
	if *mode == "stat" {
		count = countStat
	} else if *mode != "readdir" {
		fmt.Fprintf(os.Stderr, "fdscan: unknown -mode %q\n", *mode)
		os.Exit(2)
	}
	start := time.Now()
	var got int
	for range *n {
		c, err := count()
		if err != nil {
			fmt.Fprintln(os.Stderr, "fdscan:", err)
			os.Exit(1)
		}
		got = c
	}
	d := time.Since(start)
	fmt.Printf("%s: %d fds, %d counts in %v (%.1f us/count)\n", *mode, got, *n, d, float64(d.Microseconds())/float64(*n))
}

// countStat reads st_size of /proc/self/fd (Linux 6.2+: the fd count).
func countStat() (int, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/fd", &st); err != nil {
		return 0, err
	}
	if st.Size == 0 {
		return 0, fmt.Errorf("st_size of /proc/self/fd is 0: kernel before 6.2, use -mode readdir")
	}
	return int(st.Size), nil
}

// countReaddir lists /proc/self/fd, minus ".", ".." and the fd of the
// listing itself.
func countReaddir() (int, error) {
	fd, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 32*1024)
	n := 0
	for {
		got, err := unix.Getdents(fd, buf)
		if err != nil {
			return 0, err
		}
		if got == 0 {
			return n - 3, nil
		}
		_, entries, _ := unix.ParseDirent(buf[:got], -1, nil)
		n += entries
	}
}
