package store

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
)

// Priority is the CPU scheduling priority of the projector's thread.
type Priority string

// Projector priorities. Projection is deferred work: the 200 an append earns waits only for
// the raw log, so when ingest and projection compete for the CPU, ingest should win and the
// projection lag (Stats) grow, to be caught up when the load falls.
const (
	// PriorityNormal shares the CPU with ingest as an equal.
	PriorityNormal Priority = "normal"
	// PriorityLow runs the projector's thread at nice 19: it takes what CPU ingest and other
	// programs leave, and runs flat out on an idle machine.
	PriorityLow Priority = "low"
	// PriorityIdle runs it under SCHED_IDLE, below even nice 19: a waking ingest thread
	// preempts it at once, where a nice 19 thread may finish its slice first.
	PriorityIdle Priority = "idle"
)

// DefaultPriority is the projector's priority unless Config says otherwise. Measured beside
// the Collector in the same runs (docs/benchmarks/serve.md), idle gave ingest the most
// throughput of the three.
const DefaultPriority = PriorityIdle

// Validate reports an unknown priority ("" is the default).
func (p Priority) Validate() error {
	switch p {
	case "", PriorityNormal, PriorityLow, PriorityIdle:
		return nil
	}
	return fmt.Errorf("store: config: unknown projector priority %q (want normal, low or idle)", p)
}

// errPriorityNotSupported is what setThreadPriority returns where threads have no priority
// this package can set.
var errPriorityNotSupported = errors.New("thread priorities are not supported on " + runtime.GOOS)

// runAtPriority runs f on a thread of its own whose priority is lowered to p, and ends that
// thread when f returns (the goroutine never unlocks it, so the runtime does not reuse it).
// The thread holds a Go P whenever f runs, also while the kernel holds the thread back for
// other work; so GOMAXPROCS is raised by one for each lowered thread beyond those it was raised
// for already (unless GOMAXPROCS is set in the environment), and ingest keeps as many Ps as
// before: with one projector per database file, two. (A second store's projectors reuse the Ps
// a closed store's reserved.) With two projectors and one reserved P, ingest fell from 14–18k
// to ~12k mixed requests/s in some rounds, a projector descheduled by the kernel while it held
// a P. The projector's workers (worker.go), its
// other threads, run at normal priority and get no P of their own: they work only while ingest
// is idle (project.go), and a second reserved P cost ~10% more CPU per projected 1-record log
// for no speed (idle Ps run the GC's idle mark workers; BenchmarkProject,
// docs/benchmarks/store.md). A priority that cannot be set is reported to warn and f runs
// anyway. PriorityNormal runs f as it is.
func runAtPriority(p Priority, warn func(error), f func()) {
	if p == PriorityNormal {
		f()
		return
	}
	runtime.LockOSThread()
	if onMainThread() {
		// The main thread never exits: a goroutine that ends locked to it wedges it, at
		// the lowered priority. Keep it pinned here, so f's goroutine lands elsewhere, and
		// give it back after.
		defer runtime.UnlockOSThread()
		done := make(chan struct{})
		go func() {
			defer close(done)
			runAtPriority(p, warn, f)
		}()
		<-done
		return
	}
	if err := setThreadPriority(p); err != nil {
		warn(err)
	} else {
		reserve.Lock()
		if reserve.lowered++; reserve.lowered > reserve.procs && os.Getenv("GOMAXPROCS") == "" {
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
			reserve.procs++
		}
		reserve.Unlock()
		defer func() {
			reserve.Lock()
			reserve.lowered--
			reserve.Unlock()
		}()
	}
	f()
}

// reserve counts the threads runAtPriority lowered that are running now, and the Ps it added.
var reserve struct {
	sync.Mutex
	lowered, procs int
}
