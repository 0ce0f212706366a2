package profile

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Defaults of the configurations.
const (
	DefaultFreq   = 99 // CPU sampling frequency in Hz: odd, to avoid lockstep with timers
	MaxFreq       = 10000
	DefaultAttach = AttachTPBTF
	// LatencySampleAuto (the default of SyscallConfig.LatencySample) times
	// every call while the target makes at most AutoFullRate calls/s, and
	// samples above that rate, up to 1/MaxAutoLatencySample of the time.
	LatencySampleAuto    = 0
	AutoFullRate         = 50000
	MaxAutoLatencySample = 64
	// MaxLatencySample bounds SyscallConfig.LatencySample.
	MaxLatencySample = 1000
)

// AttachMode selects the kind of BPF program on the syscall tracepoints.
type AttachMode string

// Attach modes: tp_btf reads typed arguments (kernel 5.5+, BTF); raw_tp
// reads the raw argument array and is the fallback.
const (
	AttachTPBTF AttachMode = "tp_btf"
	AttachRawTP AttachMode = "raw_tp"
)

// Sentinel errors; the messages carry the fix.
var (
	// ErrNotSupported is returned on platforms without eBPF tracing.
	ErrNotSupported = errors.New("profile: eBPF profiling needs Linux")
	// ErrPermission means the process lacks the privileges to load BPF.
	ErrPermission = errors.New("needs root, or CAP_BPF and CAP_PERFMON (plus CAP_SYS_PTRACE to read other users' maps): run with sudo or setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep")
	// ErrNoProcess means the target process does not exist (or exited).
	ErrNoProcess = errors.New("no such process")
	// ErrKernelTooOld means a BPF feature this tool relies on is missing.
	ErrKernelTooOld = errors.New("kernel too old: needs Linux 5.11+ with BTF (/sys/kernel/btf/vmlinux) for tp_btf programs and task storage")
)

// Target says which process to trace: an existing one (PID) or a command
// to start (Command), which is profiled from its first instruction until it
// exits.
type Target struct {
	// PID of a running process; all its threads are traced.
	PID int
	// Command to start instead of attaching to PID (argv, Command[0] looked
	// up in $PATH). Its exit status is in the report.
	Command []string
	// Stdin, Stdout, Stderr of Command (nil: /dev/null as in os/exec).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// FollowChildren also traces the target's descendants: those alive when
	// the trace starts and those forked during it.
	FollowChildren bool
	// Duration bounds the trace; 0 means until ctx is done or the target exits.
	Duration time.Duration
	// ProcRoot is the procfs mount ("" = "/proc").
	ProcRoot string
	// Attached, if set, is called once tracing is live (for a command:
	// just before it starts running), with the target's PID. It must not
	// block.
	Attached func(pid int)
}

// Validate reports a usage error in t.
func (t Target) Validate() error {
	switch {
	case t.PID != 0 && len(t.Command) > 0:
		return errors.New("give a PID or a command, not both")
	case t.PID == 0 && len(t.Command) == 0:
		return errors.New("give --pid PID or a command after --")
	case t.PID < 0:
		return fmt.Errorf("bad pid %d", t.PID)
	case t.Duration < 0:
		return fmt.Errorf("negative duration %v", t.Duration)
	}
	return nil
}

// SyscallConfig configures TraceSyscalls.
type SyscallConfig struct {
	Target
	// PerThread also aggregates per thread.
	PerThread bool
	// Stacks records the user stack at each syscall entry, counted per
	// (syscall, stack); see SyscallReport.Profile.
	Stacks bool
	// Attach picks the program type ("" = DefaultAttach).
	Attach AttachMode
	// NoLatency counts calls and errors only, from one program at syscall
	// exit: no timing, no entry program, about a third of the overhead. exit and
	// exit_group (which never return) are not seen in this mode.
	NoLatency bool
	// LatencySample N > 1 times the calls that start in random windows
	// covering 1/N of the time (the entry program is attached only then)
	// and scales the times from them; counts and errors stay exact. 1 times
	// every call. 0 (LatencySampleAuto) picks N from the target's call rate;
	// with Stacks it means 1, as stacks are taken at entry.
	LatencySample int
}

// latencySample returns the sampling period: 1 = every call timed, N > 1
// fixed, 0 = auto.
func (c SyscallConfig) latencySample() int {
	if c.Stacks && c.LatencySample == LatencySampleAuto {
		return 1
	}
	return c.LatencySample
}

// Validate reports a usage error in c.
func (c SyscallConfig) Validate() error {
	if err := c.Target.Validate(); err != nil {
		return err
	}
	switch c.Attach {
	case "", AttachTPBTF, AttachRawTP:
	default:
		return fmt.Errorf("attach mode %q: want %s or %s", c.Attach, AttachTPBTF, AttachRawTP)
	}
	switch {
	case c.LatencySample < 0 || c.LatencySample > MaxLatencySample:
		return fmt.Errorf("latency sample %d: want 0 (auto) or 1..%d (1 = time every call)", c.LatencySample, MaxLatencySample)
	case c.LatencySample > 1 && c.Stacks:
		return errors.New("stacks time every call: latency sampling applies without stacks only")
	case c.LatencySample > 0 && c.NoLatency:
		return errors.New("no latency means no timing: latency sampling does not apply")
	}
	return nil
}

// CPUConfig configures ProfileCPU.
type CPUConfig struct {
	Target
	// Freq is the sampling frequency per CPU in Hz (0 = DefaultFreq).
	Freq int
}

// Validate reports a usage error in c.
func (c CPUConfig) Validate() error {
	if err := c.Target.Validate(); err != nil {
		return err
	}
	if c.Freq < 0 || c.Freq > MaxFreq {
		return fmt.Errorf("frequency %d Hz: want 1..%d", c.Freq, MaxFreq)
	}
	return nil
}
