package bench

import "github.com/prometheus/procfs"

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

// cpuSeconds returns the user+system CPU time of this process.
func cpuSeconds() (float64, error) {
	p, err := procfs.Self()
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return st.CPUTime(), nil
}
