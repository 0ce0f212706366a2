package project

import (
	"errors"
	"os"
	"runtime"
	"sync"
)

// errLowerNotSupported is what lowerThread returns where threads have no priority this package
// can set.
var errLowerNotSupported = errors.New("thread priorities are not supported on " + runtime.GOOS)

// RunLowered runs f, the projector's loop, on a thread of its own under SCHED_IDLE, and ends
// that thread when f returns (the goroutine never unlocks it, so the runtime does not reuse it).
// Projection is deferred work: the 200 an append earns waits only for the raw log, so when
// ingest and projection compete for the CPU a waking ingest thread preempts the projector at
// once, and the lag grows instead. Measured beside the Collector, SCHED_IDLE gave ingest the most
// throughput of normal, nice 19 and SCHED_IDLE (under-ingest query ratios 1.78–2.22 → 1.53–1.81,
// docs/benchmarks/serve.md). A catch-up runs on a Worker, at normal priority, instead.
//
// The thread holds a Go P whenever f runs, also while the kernel holds the thread back for other
// work; so GOMAXPROCS is raised by one for each lowered thread beyond those it was raised for
// already (unless GOMAXPROCS is set in the environment), and ingest keeps as many Ps as before:
// with one projector per database file, two. (A second store's projectors reuse the Ps a closed
// store's reserved.) With two projectors and one reserved P, ingest fell from 14–18k to ~12k
// mixed requests/s in some rounds, a projector descheduled by the kernel while it held a P. The
// Workers get no P of their own: a second reserved P cost ~10% more CPU per projected 1-record
// log for no speed (idle Ps run the GC's idle mark workers; BenchmarkProject,
// docs/benchmarks/store.md). A thread that cannot be lowered is reported to warn and f runs
// anyway.
func RunLowered(warn func(error), f func()) {
	runtime.LockOSThread()
	if onMainThread() {
		// The main thread never exits: a goroutine that ends locked to it wedges it, at the
		// lowered priority. Keep it pinned here, so f's goroutine lands elsewhere, and give it
		// back after.
		defer runtime.UnlockOSThread()
		done := make(chan struct{})
		go func() {
			defer close(done)
			RunLowered(warn, f)
		}()
		<-done
		return
	}
	if err := lowerThread(); err != nil {
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

// reserve counts the threads RunLowered lowered that are running now, and the Ps it added.
var reserve struct {
	sync.Mutex
	lowered, procs int
}
