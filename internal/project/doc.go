// Package project is the projection room: the projector's loop, which turns the raw log's rows
// into relational rows a slice per transaction, and its one scheduling policy, which decides
// when the loop runs, on which thread, and when it waits. internal/store starts a projector per
// projected database (Run) with what it takes of the store (Deps: the database's connection,
// the raw log's reader, the counters behind Stats, the retention's id sweep and the size
// bound's slice limit) and stops it on Close; this package never imports the store.
//
// The loop (loop.go): read the raw rows after the high-water mark, up to a slice's bounds in
// rows, records and bytes; stage them (internal/stage; prefetch.go stages the next slice while
// one commits during a catch-up; window.go stages a huge row a window at a time); write them and
// the new mark in one transaction on the projector's connection (commit.go, with the multi-row
// inserts of bulk.go, the summaries of summarize.go, the log_text documents of logtext.go and
// the trace chunks of chunks.go). A row no decoder accepts is kept in the unprojectable table
// (unprojectable.go). A failed slice rolls back and is retried with backoff.
//
// The policy (policy.go) holds its state machine (Policy), its CPU source (CPUSource; Machine
// reads /proc/stat), the projector's SCHED_IDLE thread (RunLowered) and the normal-priority
// worker a catch-up runs on (Worker).
//
// Projection is deferred work: the 200 an append earns waits only for the raw log. So ingest
// keeps the CPU under saturation and the projection lag absorbs the burst, up to a bound
// (Config.MaxLag, serve's --projection-lag), and a backlog is caught up at full speed once ingest
// is idle. One state machine decides it:
//
//	state        thread               enters when                                 leaves when
//	Idle         SCHED_IDLE           a slice reached the raw head                appends arrive: the next slice
//	                                                                              starts GatherWait (100 ms)
//	                                                                              after the last
//	KeepingUp    SCHED_IDLE           a slice left rows behind and an append      → Idle, CatchingUp by the next
//	                                  committed while it ran                      slice; → Deferring (below)
//	Deferring    none (waits)         DeferAfter (2) windows (250 ms) in a row    the writer or the machine is no
//	                                  without reaching the head, the lag grew,    longer busy, or the lag reached
//	                                  the writer busy WriterDuty (50%) of the     MaxLag (→ KeepingUp); every
//	                                  time and everything but the projector       ProbeEvery (5 s) a probe window
//	                                  using BusyShare (60%) of the machine's      of slices: lag still grew →
//	                                  CPU; the lag below MaxLag (5 min) and       Deferring, fell → KeepingUp,
//	                                  MaxLagRecords                               head → Idle
//	CatchingUp   Worker, normal prio  a slice left rows behind and no append      an append commits during a slice
//	                                  committed while it ran                      (→ KeepingUp) or a slice reaches
//	                                                                              the head (→ Idle)
//
// The measurements behind it (docs/benchmarks/serve.md, docs/benchmarks/store.md):
//   - SCHED_IDLE for the projector's thread: beside the Collector it gave ingest the most
//     throughput of normal, nice 19 and SCHED_IDLE (under-ingest query ratios 1.78–2.22 →
//     1.53–1.81). It is not a knob any more: what normal priority bought, a faster catch-up on an
//     idle machine, the CatchingUp worker gives; and with it went the share sleep (the projector
//     resting in proportion to its slices while appends arrived), which applied at normal
//     priority alone (a fixed duty cycle still took half the wall time from ingest under
//     saturation, docs/design/projection.md).
//   - Deferring: below normal priority the projector still ran on whatever CPU ingest left, and on
//     2 vCPUs under a mixed load of 10 records a request ingest then spent ~15% more CPU a request
//     (the vCPUs share the host's cores and caches) while the projector kept up with ~10% of the
//     intake, so the lag grew at ~90% of the intake rate regardless. Mixed beside the Collector in
//     20 s pairs: 0.82–1.04 before, 1.01–1.19 with it. A projector that reaches the head even once
//     a window keeps up whatever the load: at 5,000 logs/s the lag rises between slices and falls
//     at each. WriterDuty: a disk-bound or trickling writer on a machine busy with other work is
//     no reason to stop projecting (retention and the disk bound run between the projector's
//     slices, so a deferring projector would also hold back the space ingest waits for).
//   - CatchingUp on a Worker at normal priority: in a catch-up after a mixed load the SCHED_IDLE
//     thread ran 87% of the wall time and waited on the run queue 10.5%; the next slice staged
//     while one commits added 8–10% to the catch-up rate.
//   - GatherWait: a trickle of appends projected in fewer, larger slices commits telemetry.db less
//     often, and the read pool's page caches survive between commits.
//
// The CPU source and the clock are injected (Config.CPU, Config.Clock), so the policy decides the
// same in a test on any host: in a container with a CPU quota /proc/stat shows the whole machine.
package project
