package store

import (
	"context"
	"time"
)

// Deferring projection while ingest saturates the machine.
//
// Below PriorityNormal the kernel hands the CPU to ingest first, yet the projector still runs on
// whatever CPU ingest leaves, and that is not free: on a 2-vCPU machine under a mixed load of 10
// records per request, ingest then spent ~15% more CPU per request (the vCPUs share the host's
// cores and caches) while the projector kept up with ~10% of the intake, so the lag grew at ~90%
// of the intake rate regardless (docs/benchmarks/serve.md). While a load lasts that the machine
// cannot take with projection, projecting buys little and costs ingest a lot; so the projector
// waits while both the writer and the machine are saturated, up to Config.ProjectDefer of lag,
// and catches up when the load falls (Config.ProjectDeferRecords bounds the lag in records too).

const (
	// DefaultProjectDefer bounds the projection lag (LagSeconds) that deferral may build: past
	// it the projector runs under load anyway, at its priority.
	DefaultProjectDefer = 5 * time.Minute
	// deferWindow is how long the projector measures the load before deciding, and how long it
	// waits before measuring again while deferring.
	deferWindow = 250 * time.Millisecond
	// deferProbeEvery is how often a deferring projector projects for one window to see
	// whether it would now keep up (the lag falls), in which case it stops deferring.
	deferProbeEvery = 5 * time.Second
	// deferBehindWindows is how many windows in a row the projector must fall behind (never
	// reach the raw head, the lag grows, the machine loaded) before it defers.
	deferBehindWindows = 2
	// deferWriterDuty is the share of wall time the writer must spend committing (not waiting
	// for appends) for ingest to count as a steady stream.
	deferWriterDuty = 0.5
	// deferOthersBusy is the share of the machine's CPU time that everything but the
	// projector must use for the machine to count as busy.
	deferOthersBusy = 0.6
)

// loadSample is one reading of what the deferral decision compares across a window.
type loadSample struct {
	at         time.Time
	writerBusy time.Duration // the writer's busy time since Open
	lag        int64         // LagRecords
	lagSeconds float64
	cpu        cpuTimes // the machine's CPU time and the projector thread's
	cpuOK      bool     // cpu could be read (Linux)
}

// cpuTimes are cumulative CPU times: busy and total over every CPU of the machine (total
// includes idle), and self, the calling thread's own CPU time.
type cpuTimes struct {
	busy, total, self time.Duration
}

// loaded reports from two samples a window apart whether ingest is a steady stream (the writer
// busy at least deferWriterDuty of the time) on a busy machine (everything but the projector
// using at least deferOthersBusy of its CPU). Without CPU times (not Linux) it is never true:
// an idle machine with a disk-bound writer must not stop projecting.
func loaded(prev, cur loadSample) bool {
	wall := cur.at.Sub(prev.at)
	total := cur.cpu.total - prev.cpu.total
	if wall <= 0 || total <= 0 || !prev.cpuOK || !cur.cpuOK {
		return false
	}
	duty := float64(cur.writerBusy-prev.writerBusy) / float64(wall)
	others := float64(cur.cpu.busy-prev.cpu.busy-(cur.cpu.self-prev.cpu.self)) / float64(total)
	return duty >= deferWriterDuty && others >= deferOthersBusy
}

// deferrer is the projector's view of the load. It is used only by the projector goroutine,
// which runs locked to its thread below PriorityNormal (so thread CPU time is its own; what its
// workers use on theirs is added).
//
// The projector starts deferring when, over two windows in a row in which it projected, it never
// caught up with the raw head and the lag grew, while the machine was loaded. (A projector that reaches
// the head even once a window keeps up, whatever the load: at 5,000 logs/s the lag rises
// between slices and falls at each.) It defers while the machine stays loaded and the lag is
// within bounds, projecting one window every deferProbeEvery: if the lag fell over that window,
// it outpaces the intake again and deferral ends.
type deferrer struct {
	s         *Store
	enabled   bool
	last      loadSample
	caughtUp  bool      // a slice since last took every raw row there was
	behind    int       // windows in a row that fell behind (see wait)
	probing   bool      // the window since last is a probe
	lastProbe time.Time // when deferral last started
}

// sliceDone tells the deferrer that a slice ended, and whether it reached the raw head.
func (d *deferrer) sliceDone(caughtUp bool) {
	d.caughtUp = d.caughtUp || caughtUp
}

func newDeferrer(s *Store) *deferrer {
	d := &deferrer{s: s, enabled: s.cfg.ProjectDefer > 0 && s.cfg.ProjectPriority != PriorityNormal}
	if d.enabled {
		d.last = d.sample()
	}
	return d
}

func (d *deferrer) sample() loadSample {
	st := d.s.Stats()
	ls := loadSample{at: time.Now(), writerBusy: st.WriterBusy, lag: st.LagRecords, lagSeconds: st.LagSeconds}
	cpu, err := readCPUTimes()
	cpu.self += time.Duration(d.s.stats.offThreadCPU.Load()) // the projector's workers' threads
	ls.cpu, ls.cpuOK = cpu, err == nil
	return ls
}

// withinBounds reports whether the lag leaves room to defer.
func (d *deferrer) withinBounds(ls loadSample) bool {
	return ls.lagSeconds < d.s.cfg.ProjectDefer.Seconds() &&
		(d.s.cfg.ProjectDeferRecords <= 0 || ls.lag < d.s.cfg.ProjectDeferRecords)
}

// decide folds the sample that ends a window into the deferrer's state and reports whether
// deferral starts now. After a probe only the lag's fall says whether the projector outpaces
// the intake: the backlog that deferral built is not caught up in one window. Otherwise it
// takes deferBehindWindows in a row without reaching the head: one slow window (a checkpoint, a
// burst) is no trend.
func (d *deferrer) decide(cur loadSample) bool {
	behind := d.withinBounds(cur) && loaded(d.last, cur) && cur.lag > d.last.lag
	start := behind && d.probing
	if !d.probing {
		if behind && !d.caughtUp {
			d.behind++
		} else {
			d.behind = 0
		}
		start = d.behind >= deferBehindWindows
	}
	d.last, d.caughtUp, d.probing = cur, false, false
	if start {
		d.behind = 0
	}
	return start
}

// wait holds the projector back while deferral is due (see deferrer). It decides at most once
// per deferWindow, so between decisions the projector runs its slices undisturbed. It returns
// false when ctx ended.
func (d *deferrer) wait(ctx context.Context) bool {
	if !d.enabled || time.Since(d.last.at) < deferWindow {
		return ctx.Err() == nil
	}
	if !d.decide(d.sample()) {
		return ctx.Err() == nil
	}
	d.s.stats.deferring.Store(true)
	defer d.s.stats.deferring.Store(false)
	d.lastProbe = time.Now()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(deferWindow):
		}
		cur := d.sample()
		d.s.stats.deferredNanos.Add(int64(cur.at.Sub(d.last.at)))
		stay := d.withinBounds(cur) && loaded(d.last, cur)
		d.last, d.caughtUp = cur, false
		if !stay {
			return true
		}
		if time.Since(d.lastProbe) >= deferProbeEvery {
			d.probing = true
			return true // probe: project one window
		}
	}
}
