package project

import (
	"runtime"
	"sync/atomic"
)

// Worker runs jobs one at a time, in order, on an OS thread of its own at normal priority. The
// projector hands it the work it does only while ingest is idle (CatchingUp): staging the next
// slice and the slices themselves. Below normal priority, other threads took the projector's CPU
// even with the writer idle: in a catch-up after a mixed load the SCHED_IDLE thread ran 87% of
// the wall time and waited on the run queue 10.5% (/proc/PID/task/TID/schedstat). Its own thread
// makes CLOCK_THREAD_CPUTIME_ID the jobs' CPU, which each job adds to cpu (the policy counts it
// as the projector's, not as load). The projector goroutine owns it: it starts it on first use
// and stops it when it ends.
type Worker struct {
	jobs chan func()
	done chan struct{}
	cpu  *atomic.Int64 // nanoseconds of thread CPU the jobs used
}

// NewWorker starts a worker that adds its jobs' CPU time to cpu.
func NewWorker(cpu *atomic.Int64) *Worker {
	w := &Worker{jobs: make(chan func()), done: make(chan struct{}), cpu: cpu}
	go func() {
		defer close(w.done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // its priority was never changed: the runtime may reuse it
		for job := range w.jobs {
			t0, err0 := ThreadCPU()
			job()
			if t1, err1 := ThreadCPU(); err0 == nil && err1 == nil {
				w.cpu.Add(int64(t1 - t0))
			}
		}
	}()
	return w
}

// Start queues job, waiting only for the worker to be free.
func (w *Worker) Start(job func()) { w.jobs <- job }

// Run runs job on the worker and returns when it has.
func (w *Worker) Run(job func()) {
	done := make(chan struct{})
	w.jobs <- func() {
		defer close(done)
		job()
	}
	<-done
}

// Stop ends the worker once its queued job is done.
func (w *Worker) Stop() {
	close(w.jobs)
	<-w.done
}
