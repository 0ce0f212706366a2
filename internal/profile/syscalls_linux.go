package profile

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/otelbench/otelbench/internal/syscalltab"
)

// snapshotEvery is how often the mappings of traced processes are read for
// symbolization while they run.
const snapshotEvery = 500 * time.Millisecond

// finishGrace is how long a started command gets to exit after SIGINT when
// the trace is cancelled.
const finishGrace = 2 * time.Second

// TraceSyscalls attaches, traces the target until ctx is done, Duration
// elapses or the target exits, detaches and returns the aggregate. Every BPF
// object is freed before it returns, on success and on error.
func TraceSyscalls(ctx context.Context, cfg SyscallConfig) (*SyscallReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Attach == "" {
		cfg.Attach = DefaultAttach
	}
	if err := preflight(cfg.ProcRoot); err != nil {
		return nil, err
	}
	if err := checkKernel(); err != nil {
		return nil, err
	}
	tab := syscalltab.Native()

	tr, sess, syms, err := launch(cfg.Target, cfg.ProcRoot, cfg.Stacks, cfg.Attached,
		func(pid int) (*syscallSession, error) { return newSyscallSession(cfg, tab, pid) })
	if err != nil {
		return nil, err
	}
	defer sess.close()

	rep := &SyscallReport{PID: tr.pid, Command: cfg.Command, Arch: tab.Arch(), Attach: cfg.Attach,
		NoLatency: cfg.NoLatency, Started: time.Now()}
	snap := func() {
		if cfg.Stacks {
			syms.snapshot(sess.pids()...)
		}
	}
	tr.wait(ctx, cfg.Duration, snapshotEvery, snap)
	snap()
	sess.detach()
	if !cfg.NoLatency {
		rep.LatencySample = max(sess.maxSample, 1)
		rep.LatencyAuto = cfg.latencySample() == LatencySampleAuto
	}
	if sess.sampleErr != nil {
		// Counting went on; only the timing stopped.
		rep.Warnings = append(rep.Warnings, sess.sampleErr.Error()+": later calls counted but not timed")
	}
	rep.Elapsed = time.Since(tr.started)
	rep.ExitCode = tr.finish(finishGrace)
	rep.Exe = syms.exe(tr.pid)
	if err := sess.collect(rep, tab, syms); err != nil {
		return nil, err
	}
	return rep, nil
}

// syscallSession owns the loaded programs, maps and links of one trace.
type syscallSession struct {
	cfg   SyscallConfig
	pid   int
	coll  *ebpf.Collection
	links []link.Link
	// The entry program and its link, attached all the time or in sampling
	// windows by the sampler goroutine (stopped by detach).
	enterProg   *ebpf.Program
	enter       link.Link
	stopSampler chan struct{}
	samplerDone chan struct{}
	maxSample   int   // largest sampling period used (read after detach)
	sampleErr   error // why timing stopped early (read after detach)
}

func newSyscallSession(cfg SyscallConfig, tab *syscalltab.Table, pid int) (*syscallSession, error) {
	spec, err := syscallSpec(cfg, tab, pid)
	if err != nil {
		return nil, err
	}
	enter, exit := syscallPrograms(cfg)
	keep := []string{exit, "sched_exit"}
	if enter != "" {
		keep = append(keep, enter)
	}
	if cfg.FollowChildren {
		keep = append(keep, "sched_fork")
	}
	coll, err := loadCollection(spec, keep...)
	if err != nil {
		return nil, err
	}
	s := &syscallSession{cfg: cfg, pid: pid, coll: coll}
	if err := s.start(enter, exit); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// syscallSpec loads the BPF spec and sets its constants for cfg and the target pid.
func syscallSpec(cfg SyscallConfig, tab *syscalltab.Table, pid int) (*ebpf.CollectionSpec, error) {
	spec, err := loadSyscalls()
	if err != nil {
		return nil, fmt.Errorf("load BPF spec: %w", err)
	}
	nr := func(name string) int32 {
		if n, ok := tab.Number(name); ok {
			return int32(n)
		}
		return -1
	}
	if err := setVars(spec, map[string]any{
		"target_tgid": uint32(pid), "follow_children": b2u(cfg.FollowChildren),
		"per_thread": b2u(cfg.PerThread), "want_stacks": b2u(cfg.Stacks),
		"nr_exit": nr("exit"), "nr_exit_group": nr("exit_group"), "nr_rt_sigreturn": nr("rt_sigreturn"),
		"count_calls": b2u(!cfg.NoLatency && cfg.latencySample() == LatencySampleAuto),
	}); err != nil {
		return nil, err
	}
	// Maps a mode does not use shrink to one entry: the hash maps are
	// preallocated, and memory is charged to our cgroup.
	if !cfg.PerThread {
		spec.Maps["thread_stats"].MaxEntries = 1
		spec.Maps["thread_comm"].MaxEntries = 1
	}
	if !cfg.Stacks {
		spec.Maps["stacks"].MaxEntries = 1
		spec.Maps["stack_counts"].MaxEntries = 1
	}
	return spec, nil
}

// syscallPrograms names the entry and exit programs cfg attaches; enter is "" when no call is
// timed.
func syscallPrograms(cfg SyscallConfig) (enter, exit string) {
	enter, exit = "sys_enter_btf", "sys_exit_btf"
	if cfg.Attach == AttachRawTP {
		enter, exit = "sys_enter_raw", "sys_exit_raw"
	}
	if cfg.NoLatency {
		enter, exit = "", "sys_exit_count_btf"
		if cfg.Attach == AttachRawTP {
			exit = "sys_exit_count_raw"
		}
	}
	return enter, exit
}

// start fills the pid filter and attaches the programs, in the order that loses no event, and
// starts the sampler if calls are timed in windows. The caller closes s on error.
func (s *syscallSession) start(enter, exit string) error {
	cfg, coll := s.cfg, s.coll
	if cfg.FollowChildren {
		if err := coll.Maps["tgids"].Put(uint32(s.pid), uint8(1)); err != nil {
			return fmt.Errorf("add pid to filter: %w", err)
		}
		// Attach the fork hook first, so no child escapes between the two.
		if err := s.attach(coll.Programs["sched_fork"], AttachTPBTF, "sched_process_fork"); err != nil {
			return err
		}
		if _, err := addDescendants(coll.Maps["tgids"], cfg.ProcRoot, s.pid); err != nil {
			return err
		}
	}
	if err := s.attach(coll.Programs["sched_exit"], AttachTPBTF, "sched_process_exit"); err != nil {
		return err
	}
	// Exit before enter: a syscall entered before the exit hook exists
	// would otherwise never be completed.
	if err := s.attach(coll.Programs[exit], cfg.Attach, "sys_exit"); err != nil {
		return err
	}
	if enter == "" {
		return nil
	}
	s.enterProg = coll.Programs[enter]
	// Every call timed (1), or auto, which starts so: attach now, at the
	// default weight 1. A fixed period N > 1 attaches only in its windows,
	// after the sampler has set the weight to N; attached here, the calls
	// before its first window were timed at weight 1 among weight-N ones.
	n := cfg.latencySample()
	if n == 1 || n == LatencySampleAuto {
		if err := s.setEntry(true); err != nil {
			return err
		}
	}
	if n != 1 {
		s.stopSampler, s.samplerDone = make(chan struct{}), make(chan struct{})
		go s.sample(n)
	} else {
		s.maxSample = 1
	}
	return nil
}

func (s *syscallSession) attach(prog *ebpf.Program, mode AttachMode, name string) error {
	l, err := attachTracepoint(prog, mode, name)
	if err != nil {
		return err
	}
	s.links = append(s.links, l)
	return nil
}

// pids returns the traced processes: the target and followed children.
func (s *syscallSession) pids() []int {
	if !s.cfg.FollowChildren {
		return []int{s.pid}
	}
	return readTgids(s.coll.Maps["tgids"])
}

// detach stops tracing; maps stay readable until close.
func (s *syscallSession) detach() {
	if s.stopSampler != nil {
		close(s.stopSampler)
		<-s.samplerDone
		s.stopSampler = nil
	}
	// Enter first: no new syscall starts being timed while exits finish.
	if s.enter != nil {
		_ = s.enter.Close()
		s.enter = nil
	}
	for i := len(s.links) - 1; i >= 0; i-- {
		_ = s.links[i].Close()
	}
	s.links = nil
}

func (s *syscallSession) close() {
	s.detach()
	if s.coll != nil {
		s.coll.Close()
		s.coll = nil
	}
}

// collect reads the maps into rep.
func (s *syscallSession) collect(rep *SyscallReport, tab *syscalltab.Table, syms *symbolizers) error {
	var nr uint32
	var percpu []syscallsSyscallStats
	it := s.coll.Maps["stats"].Iterate()
	for it.Next(&nr, &percpu) {
		st := SyscallStat{Nr: int(nr), Name: tab.Name(int(nr))}
		for _, c := range percpu {
			addStats(&st, c)
		}
		finishStats(&st)
		if st.Count > 0 {
			rep.Syscalls = append(rep.Syscalls, st)
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read syscall stats: %w", err)
	}
	sortSyscalls(rep.Syscalls)
	rep.Children = append(rep.Children, followedChildren(s.coll, s.pid, s.cfg.FollowChildren)...)
	rep.Lost = lostCounts(s.coll, "calls")
	if s.cfg.PerThread {
		if err := s.collectThreads(rep, tab); err != nil {
			return err
		}
	}
	if s.cfg.Stacks {
		if err := s.collectStacks(rep, tab, syms); err != nil {
			return err
		}
	}
	return nil
}

// addStats adds one CPU's (or one thread's) counters to st; finishStats
// turns the sums into the report's figures.
func addStats(st *SyscallStat, c syscallsSyscallStats) {
	st.Count += c.Count
	st.Errors += c.Errors
	st.TotalNs += c.TotalNs
	st.MaxNs = max(st.MaxNs, c.MaxNs)
	st.Timed += c.Timed
	st.weight += c.Weight
	for i, n := range c.Hist {
		st.Hist[i] += n
	}
}

func (s *syscallSession) collectThreads(rep *SyscallReport, tab *syscalltab.Table) error {
	byTID := map[uint32]*ThreadStat{}
	var k syscallsThreadKey
	var v syscallsSyscallStats
	it := s.coll.Maps["thread_stats"].Iterate()
	for it.Next(&k, &v) {
		t := byTID[k.Tid]
		if t == nil {
			t = &ThreadStat{PID: int(k.Tgid), TID: int(k.Tid)}
			var c syscallsComm
			if err := s.coll.Maps["thread_comm"].Lookup(k.Tid, &c); err == nil {
				t.Comm = commString(c.Name)
			}
			byTID[k.Tid] = t
		}
		st := SyscallStat{Nr: int(k.Nr), Name: tab.Name(int(k.Nr))}
		addStats(&st, v)
		finishStats(&st)
		t.Syscalls = append(t.Syscalls, st)
		t.Count += st.Count
		t.TotalNs += st.TotalNs
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read thread stats: %w", err)
	}
	for _, t := range byTID {
		sortSyscalls(t.Syscalls)
		rep.Threads = append(rep.Threads, *t)
	}
	sortThreads(rep.Threads)
	return nil
}

func (s *syscallSession) collectStacks(rep *SyscallReport, tab *syscalltab.Table, syms *symbolizers) error {
	stacks := s.coll.Maps["stacks"]
	cache := map[[2]int32][]Frame{}
	var k syscallsStackKey
	var v syscallsStackVal
	it := s.coll.Maps["stack_counts"].Iterate()
	for it.Next(&k, &v) {
		ck := [2]int32{int32(k.Tgid), k.Stackid}
		frames, ok := cache[ck]
		if !ok {
			addrs, err := readStack(stacks, k.Stackid)
			if err == nil {
				frames = syms.user(int(k.Tgid), addrs)
			}
			cache[ck] = frames
		}
		rep.Stacks = append(rep.Stacks, StackCount{PID: int(k.Tgid), Syscall: tab.Name(int(k.Nr)),
			Count: v.Count, TotalNs: v.TotalNs, Frames: frames})
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read stack counts: %w", err)
	}
	return nil
}

func commString(b [16]int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
