package project

import (
	"context"
	"time"
)

// State is where a projector stands in the scheduling policy (doc.go has the table).
type State uint8

// The projector's states.
const (
	// Idle: the last slice took every raw row there was; the projector waits for appends,
	// then lets a trickle gather for GatherWait before its next slice.
	Idle State = iota
	// KeepingUp: raw rows are waiting and appends commit while the projector works; slices run
	// back to back on the projector's own thread, at SCHED_IDLE.
	KeepingUp
	// Deferring: ingest saturates the machine and the projector fell behind for DeferAfter
	// windows in a row; it waits, projecting one probe window every ProbeEvery, until the load
	// falls or the lag reaches its bound.
	Deferring
	// CatchingUp: raw rows are waiting and no append committed during the last slice; slices run
	// back to back on a worker thread at normal priority, the next one staged while one commits.
	CatchingUp
)

func (s State) String() string {
	switch s {
	case Idle:
		return "idle"
	case KeepingUp:
		return "keeping up"
	case Deferring:
		return "deferring"
	case CatchingUp:
		return "catching up"
	}
	return "unknown"
}

// The policy's thresholds; doc.go names the measurement behind each.
const (
	// GatherWait is how long an Idle projector lets appends gather after its last slice before
	// the next one: a trickle is projected in fewer, larger slices.
	GatherWait = 100 * time.Millisecond
	// Window is how long a KeepingUp projector measures the load before deciding, and how long
	// a Deferring one waits before measuring again.
	Window = 250 * time.Millisecond
	// DeferAfter is how many windows in a row a KeepingUp projector must fall behind (never
	// reach the raw head, the lag grows, the machine busy) before it defers.
	DeferAfter = 2
	// ProbeEvery is how often a Deferring projector projects for one window to see whether it
	// would now keep up (the lag falls over the window); if so, it stops deferring.
	ProbeEvery = 5 * time.Second
	// BusyShare is the share of the machine's CPU time that everything but the projector must
	// use for the machine to count as busy.
	BusyShare = 0.6
	// WriterDuty is the share of a window the raw log's writer must spend committing (not
	// waiting for appends) for ingest to count as a steady stream: a disk-bound or trickling
	// writer on a machine busy with other work is no reason to stop projecting.
	WriterDuty = 0.5
	// DefaultMaxLag bounds the projection lag, in seconds of age, that deferring may build: past
	// it the projector runs under load anyway, at SCHED_IDLE.
	DefaultMaxLag = 5 * time.Minute
)

// Config is a policy's configuration. Zero values fall back to the defaults.
type Config struct {
	// MaxLag bounds the lag (the age of the oldest raw row not projected) up to which the
	// projector may defer under saturation; 0 means DefaultMaxLag, negative never defers.
	MaxLag time.Duration
	// MaxLagRecords, if positive, also ends deferring at that many records of lag.
	MaxLagRecords int64
	// CPU reads the machine's CPU times; nil means Machine, the machine-wide /proc/stat.
	CPU CPUSource
	// Clock times the windows; nil means the wall clock.
	Clock Clock
}

// Reading is what the store reports to the policy at the end of a window.
type Reading struct {
	// LagRecords and LagSeconds are the records not yet projected and the age of the oldest.
	LagRecords int64
	LagSeconds float64
	// WriterBusy is the time the raw log's writer spent committing, cumulative.
	WriterBusy time.Duration
	// Workers is the CPU time the projector's Workers used, cumulative: the projector's own,
	// not load.
	Workers time.Duration
	// DiskPressure says the data directory is over its size bound: space comes back only from
	// the retention and raw pruning that run between slices, so the projector never defers.
	DiskPressure bool
}

// Sample is one reading of what the policy weighs at the end of a window.
type Sample struct {
	Reading
	At    time.Time
	CPU   CPUTimes // cumulative, Self including Workers
	CPUOK bool     // CPU could be read
}

// Policy is one projector's scheduling state machine (doc.go). Only its projector's goroutine
// uses it, and it must run locked to its thread (Lowered), so the CPU source's Self is the
// projector's: after every slice Sliced, before every slice Check, and Wait while Deferring.
type Policy struct {
	cfg   Config
	read  func() Reading
	state State

	open      bool      // last starts the window in progress
	last      Sample    // taken when the window began
	caughtUp  bool      // a slice of the window reached the raw head
	behind    int       // windows in a row that fell behind
	probing   bool      // the window in progress is a probe
	deferFrom time.Time // when the deferral began or last probed
}

// NewPolicy returns a policy in state Idle that reads the store's side of each sample from read.
func NewPolicy(cfg Config, read func() Reading) *Policy {
	if cfg.MaxLag == 0 {
		cfg.MaxLag = DefaultMaxLag
	}
	if cfg.CPU == nil {
		cfg.CPU = Machine{}
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	return &Policy{cfg: cfg, read: read}
}

// State returns the projector's state.
func (p *Policy) State() State { return p.state }

// Now is the policy's clock.
func (p *Policy) Now() time.Time { return p.cfg.Clock.Now() }

// Sliced moves the state after a slice that took n raw rows of the total it read: n == total
// reached the raw head, Idle; otherwise CatchingUp when no append committed while it ran
// (ingestIdle), else KeepingUp. A probe's slices stay Deferring until its window ends (Check)
// or one reaches the head.
func (p *Policy) Sliced(n, total int, ingestIdle bool) {
	reached := n == total
	p.caughtUp = p.caughtUp || reached
	switch {
	case reached:
		p.state, p.probing = Idle, false // a probe that reached the head keeps up
	case p.probing:
	case ingestIdle:
		p.state = CatchingUp
	default:
		p.state = KeepingUp
	}
	if p.state != KeepingUp && !p.probing {
		p.open, p.behind = false, 0 // a window measures keeping up only
	}
}

// Check runs before each slice. Keeping up (or probing), it opens a window, or closes one that
// lasted Window and decides: it reports whether the projector defers now (state Deferring, to
// Wait). Deferring may start only after DeferAfter windows in a row without reaching the head;
// after a probe only the lag's fall over the window says whether the projector outpaces the
// intake, since the backlog deferring built is not caught up in one window.
func (p *Policy) Check() bool {
	if p.cfg.MaxLag < 0 || (p.state != KeepingUp && !p.probing) {
		return false
	}
	if !p.open {
		p.last, p.open, p.caughtUp = p.sample(), true, false
		return false
	}
	if p.Now().Sub(p.last.At) < Window {
		return false
	}
	cur := p.sample()
	behind := p.withinBounds(cur) && loaded(p.last, cur) && cur.LagRecords > p.last.LagRecords
	start := behind && p.probing
	if !p.probing {
		if behind && !p.caughtUp {
			p.behind++
		} else {
			p.behind = 0
		}
		start = p.behind >= DeferAfter
	}
	p.last, p.caughtUp, p.probing = cur, false, false
	switch {
	case start:
		p.behind, p.state, p.deferFrom = 0, Deferring, cur.At
	case p.state == Deferring:
		p.state = KeepingUp // a probe that kept up
	}
	return start
}

// Wait holds a Deferring projector back a Window at a time, calling waited with each window's
// length (for Stats). It returns true when the projector is to run: the machine is no longer
// busy or the lag reached its bound (state KeepingUp), or a probe is due every ProbeEvery
// (still Deferring; Check ends the probe). It returns false when ctx ended.
func (p *Policy) Wait(ctx context.Context, waited func(time.Duration)) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-p.cfg.Clock.After(Window):
		}
		cur := p.sample()
		waited(cur.At.Sub(p.last.At))
		stay := p.withinBounds(cur) && loaded(p.last, cur)
		p.last, p.caughtUp = cur, false
		switch {
		case !stay:
			p.state = KeepingUp
			return true
		case cur.At.Sub(p.deferFrom) >= ProbeEvery:
			p.probing, p.deferFrom = true, cur.At
			return true
		}
	}
}

func (p *Policy) sample() Sample {
	s := Sample{At: p.Now(), Reading: p.read()}
	cpu, err := p.cfg.CPU.Read()
	cpu.Self += s.Workers
	s.CPU, s.CPUOK = cpu, err == nil
	return s
}

// withinBounds reports whether the lag leaves room to defer, and the disk does.
func (p *Policy) withinBounds(s Sample) bool {
	return p.cfg.MaxLag > 0 && !s.DiskPressure && s.LagSeconds < p.cfg.MaxLag.Seconds() &&
		(p.cfg.MaxLagRecords <= 0 || s.LagRecords < p.cfg.MaxLagRecords)
}

// loaded reports from two samples a window apart whether ingest is a steady stream (the writer
// busy at least WriterDuty of the window) on a busy machine (everything but the projector using
// at least BusyShare of its CPU). Without CPU times it is never true: a machine whose load
// cannot be read must not stop projecting.
func loaded(prev, cur Sample) bool {
	wall := cur.At.Sub(prev.At)
	total := cur.CPU.Total - prev.CPU.Total
	if wall <= 0 || total <= 0 || !prev.CPUOK || !cur.CPUOK {
		return false
	}
	duty := float64(cur.WriterBusy-prev.WriterBusy) / float64(wall)
	others := float64(cur.CPU.Busy-prev.CPU.Busy-(cur.CPU.Self-prev.CPU.Self)) / float64(total)
	return duty >= WriterDuty && others >= BusyShare
}

// Gather holds an Idle projector back until GatherWait after lastSlice, the start of its last
// slice, so a trickle of appends is projected in fewer, larger slices: telemetry.db commits less
// often (less work a record, and the read pool's page caches, which SQLite drops whenever the
// database changed, survive between commits). A backlog never waits. It returns false when ctx
// ended.
func (p *Policy) Gather(ctx context.Context, lastSlice time.Time) bool {
	if p.state != Idle || lastSlice.IsZero() {
		return ctx.Err() == nil
	}
	wait := GatherWait - p.Now().Sub(lastSlice)
	if wait <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-p.cfg.Clock.After(wait):
		return true
	}
}
