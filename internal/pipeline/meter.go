package pipeline

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/otelbench/otelbench/internal/profile"
	"github.com/otelbench/otelbench/internal/selfusage"
)

// meter measures the agent's and the harness's cost over the window from
// start to stop: CPU deltas from /proc and getrusage, the peak of the
// agent's descriptors sampled every sampleEvery, and its syscalls.
type meter struct {
	cfg   Config
	ag    *agent
	proc  *procReader
	err   error // why agent figures are missing
	base  procSample
	self  time.Duration
	t0    time.Time
	fdMax int

	stopSample chan struct{}
	sampled    chan struct{}

	cancelTrace context.CancelFunc
	traced      chan traceResult
}

type traceResult struct {
	rep *profile.SyscallReport
	err error
}

type cost struct {
	agent   AgentStats
	harness HarnessStats
}

// measure prepares the meter: /proc access, and with cfg.Syscalls the BPF
// tracer, attached before it returns so that no line is written untraced.
func measure(ctx context.Context, cfg Config, ag *agent) (*meter, error) {
	m := &meter{cfg: cfg, ag: ag}
	if m.proc, m.err = newProcReader(); m.err != nil {
		m.proc = nil
	}
	if !cfg.Syscalls {
		return m, nil
	}
	tctx, cancel := context.WithCancel(ctx)
	m.cancelTrace, m.traced = cancel, make(chan traceResult, 1)
	attached := make(chan struct{})
	go func() { // owned: ends when stop cancels tctx
		rep, err := traceSyscalls(tctx, ag.pid, cfg.Pprof != "", attached)
		m.traced <- traceResult{rep, err}
	}()
	select {
	case <-attached:
		return m, nil
	case r := <-m.traced:
		cancel()
		return nil, fmt.Errorf("trace agent syscalls: %w", r.err)
	case <-ctx.Done():
		cancel()
		<-m.traced
		return nil, ctx.Err()
	}
}

// start takes the baseline and starts sampling descriptors.
func (m *meter) start() {
	m.t0 = time.Now()
	m.self, _ = selfusage.CPU() // not Unix: both reads fail and the harness figure stays 0
	if m.proc != nil {
		m.base, m.err = m.proc.sample(m.ag.pid)
		m.fdMax = m.base.fds
	}
	m.stopSample, m.sampled = make(chan struct{}), make(chan struct{})
	go func() { // owned: ends when stop closes stopSample
		defer close(m.sampled)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-m.stopSample:
				return
			case <-t.C:
				if m.proc != nil && m.err == nil {
					if s, err := m.proc.sample(m.ag.pid); err == nil {
						m.fdMax = max(m.fdMax, s.fds)
					}
				}
			}
		}
	}()
}

// stop ends the window and returns the costs, per line of the lines
// written.
func (m *meter) stop(lines int64) cost {
	close(m.stopSample)
	<-m.sampled
	var c cost
	secs := time.Since(m.t0).Seconds()
	if cpu, err := selfusage.CPU(); err == nil {
		c.harness.CPUSeconds = (cpu - m.self).Seconds()
	}
	if secs > 0 {
		c.harness.Cores = c.harness.CPUSeconds / secs
	}
	a := &c.agent
	a.PID = m.ag.pid
	if m.proc != nil && m.err == nil {
		end, err := m.proc.sample(m.ag.pid)
		if err != nil {
			m.err = err
		} else {
			a.CPUUserSeconds = end.cpuUser - m.base.cpuUser
			a.CPUSystemSeconds = end.cpuSys - m.base.cpuSys
			a.PeakRSSBytes = end.peakRSS
			a.FDsMax = max(m.fdMax, end.fds)
			if lines > 0 {
				a.CPUPer1000Lines = (a.CPUUserSeconds + a.CPUSystemSeconds) / float64(lines) * 1000
			}
		}
	}
	if m.proc != nil {
		m.proc.close()
	}
	if m.err != nil {
		a.Error = m.err.Error()
	}
	if m.cancelTrace != nil {
		m.cancelTrace()
		r := <-m.traced
		if r.err != nil {
			a.Error = fmt.Sprintf("syscalls: %v", r.err)
		} else {
			a.Syscalls = syscallStats(r.rep, lines)
			if err := m.writePprof(r.rep); err != nil {
				a.Error = err.Error()
			}
		}
	}
	return c
}

func (m *meter) writePprof(rep *profile.SyscallReport) error {
	if m.cfg.Pprof == "" {
		return nil
	}
	p, err := rep.Profile()
	if err != nil {
		return fmt.Errorf("agent pprof: %w", err)
	}
	f, err := os.Create(m.cfg.Pprof)
	if err != nil {
		return fmt.Errorf("agent pprof: %w", err)
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("agent pprof: %w", err)
	}
	return f.Close()
}

func syscallStats(rep *profile.SyscallReport, lines int64) *SyscallStats {
	s := &SyscallStats{Total: rep.Total()}
	per := func(n uint64) float64 {
		if lines == 0 {
			return 0
		}
		return float64(n) / float64(lines)
	}
	s.PerLine = per(s.Total)
	rep.Sort(profile.SortCount)
	for _, st := range rep.Syscalls {
		s.ByName = append(s.ByName, SyscallPerLine{Name: st.Name, Count: st.Count, PerLine: per(st.Count)})
	}
	for _, n := range rep.Lost {
		s.Lost += n
	}
	return s
}
