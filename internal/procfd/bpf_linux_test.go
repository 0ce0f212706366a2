package procfd

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// requireBPF skips tests of the BPF counter when not root, and loads it.
func requireBPF(t *testing.T, pfs *FS) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the BPF counter needs root (or CAP_BPF and CAP_PERFMON)")
	}
	if _, _, err := pfs.CountMethod(os.Getpid(), MethodBPF); err != nil {
		t.Fatalf("bpf count as root: %v", err)
	}
}

// mustCount counts pid's descriptors with method m, failing the test on an error.
func mustCount(t *testing.T, pfs *FS, pid int, m Method) int {
	t.Helper()
	n, _, err := pfs.CountMethod(pid, m)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newBPFFS(t *testing.T) *FS {
	t.Helper()
	pfs := newProcFS(t)
	t.Cleanup(func() {
		if err := pfs.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	requireBPF(t, pfs)
	return pfs
}

func TestBPFCountMovesByK(t *testing.T) {
	pfs := newBPFFS(t)
	pid := os.Getpid()
	warmUp(t)
	for _, k := range []int{1, 37, 1000} {
		before, _, err := pfs.CountMethod(pid, MethodBPF)
		if err != nil {
			t.Fatalf("count before: %v", err)
		}
		files := openFiles(t, k)
		after, used, err := pfs.CountMethod(pid, MethodBPF)
		closeFiles(files)
		if err != nil {
			t.Fatalf("count after: %v", err)
		}
		if after-before != k || used != MethodBPF {
			t.Errorf("k=%d: count moved by %d (%d -> %d) with %s, want %d with bpf", k, after-before, before, after, used, k)
		}
	}
}

func TestBPFAgreesWithReaddirAndStat(t *testing.T) {
	pfs := newBPFFS(t)
	// Our own process: bpf, like readdir, sees the descriptor it reads
	// through (the iterator's), stat does not.
	pid := os.Getpid()
	r := mustCount(t, pfs, pid, MethodReaddir)
	b := mustCount(t, pfs, pid, MethodBPF)
	if b != r {
		t.Errorf("self: bpf = %d, readdir = %d", b, r)
	}
	if pfs.StatSizeSupported() {
		s := mustCount(t, pfs, pid, MethodStat)
		if b != s+1 {
			t.Errorf("self: bpf = %d, want stat (%d) + 1 (its own iterator descriptor)", b, s)
		}
	}
	// A child holding N descriptors (fd 0-2, the holder's /dev/null and
	// N-1 dups, plus what the Go runtime opened): every method agrees.
	for _, n := range []int{0, 1, 2500} {
		holder := startHolder(t, n)
		r := mustCount(t, pfs, holder, MethodReaddir)
		b, used, err := pfs.CountMethod(holder, MethodBPF)
		if err != nil || used != MethodBPF {
			t.Fatalf("holder of %d: bpf %d %s %v", n, b, used, err)
		}
		if b != r || b < n {
			t.Errorf("holder of %d: bpf = %d, readdir = %d", n, b, r)
		}
		if pfs.StatSizeSupported() {
			if s, _, err := pfs.CountMethod(holder, MethodStat); err != nil || s != b {
				t.Errorf("holder of %d: stat = %d %v, bpf = %d", n, s, err, b)
			}
		}
	}
}

// TestAutoLoadsBPFForLargeTables: where the kernel does not report sizes,
// auto reads directories until a table of BPFLoadFDs or more loads the BPF
// counter, and counts with it from then on.
func TestAutoLoadsBPFForLargeTables(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the BPF counter needs root (or CAP_BPF and CAP_PERFMON)")
	}
	pfs := newProcFS(t)
	defer pfs.Close()
	pfs.statProbed, pfs.statSize = true, false
	small, large := startHolder(t, 300), startHolder(t, BPFLoadFDs)
	if _, used, err := pfs.Count(small); err != nil || used != MethodReaddir || pfs.bpf.loaded() {
		t.Errorf("small table: %s %v, loaded %v; want readdir, not loaded", used, err, pfs.bpf.loaded())
	}
	want, used, err := pfs.Count(large)
	if err != nil || used != MethodReaddir || !pfs.bpf.loaded() {
		t.Errorf("first large table: %s %v, loaded %v; want readdir, then loaded", used, err, pfs.bpf.loaded())
	}
	if n, used, err := pfs.Count(large); err != nil || used != MethodBPF || n != want {
		t.Errorf("second count: %d %s %v, want %d bpf", n, used, err, want)
	}
	if _, used, err := pfs.Count(small); err != nil || used != MethodBPF {
		t.Errorf("small table once loaded: %s %v, want bpf", used, err)
	}
}

// TestAutoUsesBPFWithoutStatSizes: where the kernel does not report sizes
// (before 6.2) and the BPF counter is loaded, auto counts with it and falls
// back to readdir for an empty table (a zombie).
func TestAutoUsesBPFWithoutStatSizes(t *testing.T) {
	pfs := newBPFFS(t)
	old := *pfs
	old.statProbed, old.statSize = true, false
	holder := startHolder(t, 300)
	want := mustCount(t, pfs, holder, MethodReaddir)
	if n, used, err := old.Count(holder); err != nil || n != want || used != MethodBPF {
		t.Errorf("auto without stat sizes = %d %s %v, want %d bpf", n, used, err, want)
	}
	zombie := exec.Command("/bin/sh", "-c", "exit 0")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	waitState(t, zombie.Process.Pid, 'Z')
	if n, used, err := old.Count(zombie.Process.Pid); err != nil || n != 0 || used != MethodReaddir {
		t.Errorf("auto on a zombie without stat sizes = %d %s %v, want 0 readdir", n, used, err)
	}
	if n, used, err := pfs.CountMethod(zombie.Process.Pid, MethodBPF); err != nil || n != 0 || used != MethodBPF {
		t.Errorf("bpf on a zombie = %d %s %v, want 0 bpf", n, used, err)
	}
}

func TestBPFMissingProcess(t *testing.T) {
	pfs := newBPFFS(t)
	for _, pid := range []int{1<<31 - 1, -1, 0} {
		if _, _, err := pfs.CountMethod(pid, MethodBPF); !errors.Is(err, ErrNoProcess) {
			t.Errorf("pid %d: error = %v, want ErrNoProcess", pid, err)
		}
	}
	if _, _, err := pfs.CountTask(os.Getpid(), 1<<31-1, MethodBPF); !errors.Is(err, ErrNoProcess) {
		t.Errorf("missing thread: error = %v, want ErrNoProcess", err)
	}
}

func TestBPFNotOurPIDNamespace(t *testing.T) {
	pfs := newBPFFS(t)
	other := *pfs
	other.ownPIDs = false
	if _, _, err := other.CountMethod(os.Getpid(), MethodBPF); !errors.Is(err, ErrBPFUnavailable) {
		t.Errorf("error = %v, want ErrBPFUnavailable", err)
	}
	root := makeFixture(t, 42, 3)
	fix, err := NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := fix.CountMethod(42, MethodBPF); !errors.Is(err, ErrBPFUnavailable) {
		t.Errorf("fixture: error = %v, want ErrBPFUnavailable", err)
	}
}

func TestBPFThreadWithOwnTable(t *testing.T) {
	pfs := newBPFFS(t)
	pid := os.Getpid()
	const k = 40
	tid, _, _ := ownTableThread(t, k, nil)

	// The process's count is the leader's table only: bpf and readdir
	// agree (each holds one descriptor of its own while counting).
	r := mustCount(t, pfs, pid, MethodReaddir)
	b := mustCount(t, pfs, pid, MethodBPF)
	if b != r {
		t.Errorf("process: bpf = %d, readdir = %d", b, r)
	}
	// The thread's own table: the counting descriptors are in the
	// leader's table, so both see exactly the thread's.
	rt, _, err := pfs.CountTask(pid, tid, MethodReaddir)
	if err != nil {
		t.Fatal(err)
	}
	bt, used, err := pfs.CountTask(pid, tid, MethodBPF)
	if err != nil || used != MethodBPF {
		t.Fatalf("thread: bpf %d %s %v", bt, used, err)
	}
	if bt != rt || bt < k {
		t.Errorf("thread %d: bpf = %d, readdir = %d, want equal and >= %d", tid, bt, rt, k)
	}
	if bt == b {
		t.Errorf("thread %d and process counted alike (%d): tables not told apart", tid, bt)
	}
	// Another thread shares the leader's table (the walk skips it).
	tids, err := pfs.TIDs(pid)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tids, func(x int) bool { return x != pid && x != tid })
	if i < 0 {
		t.Skip("no third thread to compare")
	}
	bs, _, err := pfs.CountTask(pid, tids[i], MethodBPF)
	if err != nil {
		t.Fatal(err)
	}
	rs, _, err := pfs.CountTask(pid, tids[i], MethodReaddir)
	if err != nil {
		t.Fatal(err)
	}
	if bs != rs {
		t.Errorf("shared thread %d: bpf = %d, readdir = %d", tids[i], bs, rs)
	}
}

// TestBPFCloseFrees: the programs hold descriptors from the first bpf count
// until Close, which releases them (and the kernel frees the programs); the
// FS then loads them again on demand.
func TestBPFCloseFrees(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the BPF counter needs root (or CAP_BPF and CAP_PERFMON)")
	}
	pfs := newProcFS(t)
	warmUp(t)
	before := selfFDs(t, pfs)
	if pfs.bpf.loaded() {
		t.Fatal("programs loaded before the first bpf count")
	}
	if _, _, err := pfs.CountMethod(os.Getpid(), MethodBPF); err != nil {
		t.Fatal(err)
	}
	if !pfs.bpf.loaded() || selfFDs(t, pfs) <= before {
		t.Fatalf("after a bpf count: loaded %v, fds %d (were %d)", pfs.bpf.loaded(), selfFDs(t, pfs), before)
	}
	var ids []ebpf.ProgramID
	for _, p := range []*ebpf.Program{pfs.bpf.objs.CountFiles, pfs.bpf.objs.TaskFiles} {
		info, err := p.Info()
		if err != nil {
			t.Fatal(err)
		}
		id, _ := info.ID()
		ids = append(ids, id)
	}
	if err := pfs.Close(); err != nil {
		t.Fatal(err)
	}
	if pfs.bpf.loaded() {
		t.Error("loaded after Close")
	}
	if after := selfFDs(t, pfs); after != before {
		t.Errorf("fds after Close = %d, want %d", after, before)
	}
	// The kernel frees a program after an RCU grace period.
	deadline := time.Now().Add(10 * time.Second)
	for _, id := range ids {
		for {
			p, err := ebpf.NewProgramFromID(id)
			if errors.Is(err, os.ErrNotExist) {
				break
			}
			if err == nil {
				p.Close()
			}
			if time.Now().After(deadline) {
				t.Fatalf("program %d still exists after Close (%v)", id, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, used, err := pfs.CountMethod(os.Getpid(), MethodBPF); err != nil || used != MethodBPF {
		t.Errorf("bpf count after Close: %s %v", used, err)
	}
	if err := pfs.Close(); err != nil {
		t.Fatal(err)
	}
}

// selfFDs counts this process's descriptors by reading the directory.
func selfFDs(t *testing.T, pfs *FS) int {
	t.Helper()
	n := mustCount(t, pfs, os.Getpid(), MethodReaddir)
	return n
}

// TestBPFConcurrent counts from several goroutines while the programs are
// closed and reloaded under them: every count is exact.
func TestBPFConcurrent(t *testing.T) {
	pfs := newBPFFS(t)
	holder := startHolder(t, 500)
	want := mustCount(t, pfs, holder, MethodReaddir)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for range 25 {
				n, used, err := pfs.CountMethod(holder, MethodBPF)
				if err == nil && (n != want || used != MethodBPF) {
					err = errors.New("count " + strconv.Itoa(n) + " " + string(used) + ", want " + strconv.Itoa(want) + " bpf")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	if err := pfs.Close(); err != nil {
		t.Error(err)
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
