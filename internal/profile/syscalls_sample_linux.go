package profile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Latency sampling windows: each windowPeriod, the entry program is
// attached for 1/N of it, at a random offset (so that no periodic
// behaviour of the target lines up with the windows).
const (
	windowPeriod = 50 * time.Millisecond
	autoCheck    = 2 * time.Millisecond
)

// setEntry attaches or detaches the entry program.
func (s *syscallSession) setEntry(on bool) error {
	if on == (s.enter != nil) {
		return nil
	}
	if !on {
		err := s.enter.Close()
		s.enter = nil
		if err != nil {
			return fmt.Errorf("detach sys_enter: %w", err)
		}
		return nil
	}
	l, err := attachTracepoint(s.enterProg, s.cfg.Attach, "sys_enter")
	if err != nil {
		return err
	}
	s.enter = l
	return nil
}

// sample runs the sampling windows until stopSampler is closed: with a
// fixed period n > 1, or (n == 0, auto) with a period from the call rate
// since the last decision: every call timed up to AutoFullRate calls/s,
// then N = rate / AutoFullRate, at most MaxAutoLatencySample. While every
// call is timed, the rate is checked every autoCheck, so that a storm is
// sampled soon after it starts.
func (s *syscallSession) sample(n int) {
	defer close(s.samplerDone)
	weight := s.coll.Variables["entry_weight"]
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	wait := func(d time.Duration) bool {
		timer.Reset(d)
		select {
		case <-s.stopSampler:
			return false
		case <-timer.C:
			return true
		}
	}
	fail := func(err error) {
		s.sampleErr = fmt.Errorf("latency sampling: %w", err)
		_ = s.setEntry(false)
	}
	var last uint64
	lastT := time.Now()
	for {
		cur := n
		if n == LatencySampleAuto {
			calls, now := readCounter(s.coll.Maps["counters"], ctrCalls), time.Now()
			rate := float64(calls-last) / max(now.Sub(lastT).Seconds(), 1e-3)
			last, lastT = calls, now
			cur = min(max(int(math.Ceil(rate/AutoFullRate)), 1), MaxAutoLatencySample)
		}
		s.maxSample = max(s.maxSample, cur)
		if cur == 1 {
			if s.enter == nil {
				if err := weight.Set(uint64(1)); err != nil {
					fail(err)
					return
				}
			}
			if err := s.setEntry(true); err != nil {
				fail(err)
				return
			}
			if !wait(autoCheck) {
				return
			}
			continue
		}
		// Detached while the weight changes: a record carries the weight
		// of the window it started in.
		if err := s.setEntry(false); err != nil {
			fail(err)
			return
		}
		if err := weight.Set(uint64(cur)); err != nil {
			fail(err)
			return
		}
		on := windowPeriod / time.Duration(cur)
		off := rand.N(windowPeriod - on)
		if !wait(off) {
			return
		}
		if err := s.setEntry(true); err != nil {
			fail(err)
			return
		}
		if !wait(on) {
			return
		}
		if err := s.setEntry(false); err != nil {
			fail(err)
			return
		}
		if !wait(windowPeriod - on - off) {
			return
		}
	}
}
