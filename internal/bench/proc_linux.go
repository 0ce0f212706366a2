package bench

import (
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// peakRSS returns VmHWM of this process in bytes.
func peakRSS() (int64, error) {
	p, err := procfs.Self()
	if err != nil {
		return 0, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, err
	}
	return int64(st.VmHWM), nil
}

// cpuSeconds returns the user+system CPU time of this process, from getrusage: in
// microseconds, where /proc/self/stat counts clock ticks (10 ms), coarser than a short catch-up.
func cpuSeconds() (float64, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, nil
}

// machineTimes returns the machine's CPU time since boot, summed over its CPUs, from
// /proc/stat: idle (with iowait) and steal are parts of total (guest time is already counted
// in user and nice, so it is left out).
func machineTimes() (machineCPU, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return machineCPU{}, err
	}
	st, err := fs.Stat()
	if err != nil {
		return machineCPU{}, err
	}
	c := st.CPUTotal
	return machineCPU{
		total: c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal,
		idle:  c.Idle + c.Iowait,
		steal: c.Steal,
	}, nil
}
