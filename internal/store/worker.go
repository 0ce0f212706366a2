package store

import (
	"runtime"
	"sync/atomic"
)

// worker runs jobs one at a time, in order, on an OS thread of its own at normal priority.
// The projector hands it the work it does only while ingest is idle: staging the next slice
// (startPrefetch) and, while catching up, the slices themselves (projectNext). Its own thread
// makes CLOCK_THREAD_CPUTIME_ID the jobs' CPU, which each job adds to cpu (the deferrer counts
// it as the projector's, not as the load's). The projector goroutine owns it: it starts it on
// first use and stops it in close.
type worker struct {
	jobs chan func()
	done chan struct{}
	cpu  *atomic.Int64 // nanoseconds of thread CPU the jobs used
}

func newWorker(cpu *atomic.Int64) *worker {
	w := &worker{jobs: make(chan func()), done: make(chan struct{}), cpu: cpu}
	go func() {
		defer close(w.done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // its priority was never changed: the runtime may reuse it
		for job := range w.jobs {
			t0, err0 := threadCPU()
			job()
			if t1, err1 := threadCPU(); err0 == nil && err1 == nil {
				w.cpu.Add(int64(t1 - t0))
			}
		}
	}()
	return w
}

// start queues job, waiting only for the worker to be free.
func (w *worker) start(job func()) { w.jobs <- job }

// run runs job on the worker and returns when it has.
func (w *worker) run(job func()) {
	done := make(chan struct{})
	w.jobs <- func() {
		defer close(done)
		job()
	}
	<-done
}

// stop ends the worker once its queued job is done.
func (w *worker) stop() {
	close(w.jobs)
	<-w.done
}
