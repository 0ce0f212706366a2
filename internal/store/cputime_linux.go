package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of /proc/stat's times (USER_HZ, 100 on every Linux architecture).
const userHZ = 100

// readCPUTimes reads the machine's CPU times from /proc/stat (the aggregate "cpu" line: busy is
// user, nice, system, irq, softirq and steal; total adds idle and iowait) and the calling
// thread's from CLOCK_THREAD_CPUTIME_ID.
func readCPUTimes() (cpuTimes, error) {
	var t cpuTimes
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return t, fmt.Errorf("read machine cpu times: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return t, errors.New("read machine cpu times: /proc/stat has no aggregate cpu line")
	}
	var v [8]int64 // user nice system idle iowait irq softirq steal
	for i := range v {
		if v[i], err = strconv.ParseInt(string(f[i+1]), 10, 64); err != nil {
			return t, fmt.Errorf("read machine cpu times: /proc/stat field %d: %w", i+1, err)
		}
	}
	tick := time.Second / userHZ
	t.busy = time.Duration(v[0]+v[1]+v[2]+v[5]+v[6]+v[7]) * tick
	t.total = t.busy + time.Duration(v[3]+v[4])*tick
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return t, fmt.Errorf("read thread cpu time: %w", err)
	}
	t.self = time.Duration(ts.Nano())
	return t, nil
}
