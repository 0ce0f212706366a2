package bench

import (
	"github.com/prometheus/procfs"
)

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
