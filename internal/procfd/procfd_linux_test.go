package procfd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/otelbench/otelbench/internal/polltest"
)

func newProcFS(t *testing.T) *FS {
	t.Helper()
	pfs, err := NewFS("")
	if err != nil {
		t.Fatalf("NewFS: %v", err)
	}
	if !pfs.IsProcfs() {
		t.Fatalf("/proc is not procfs here")
	}
	return pfs
}

// requireStatSize skips tests of the fast path on kernels before 6.2.
func requireStatSize(t *testing.T, pfs *FS) {
	t.Helper()
	if !pfs.StatSizeSupported() {
		t.Skip("kernel does not report fd counts in stat size (needs Linux 6.2+)")
	}
}

func openFiles(t *testing.T, k int) []*os.File {
	t.Helper()
	files := make([]*os.File, 0, k)
	for range k {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		files = append(files, f)
	}
	return files
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// warmUp opens and closes a file once, so that descriptors the runtime
// opens on first use (the netpoller's) are not counted as the test's.
func warmUp(t *testing.T) { closeFiles(openFiles(t, 1)) }

func TestCountMovesByK(t *testing.T) {
	pfs := newProcFS(t)
	pid := os.Getpid()
	warmUp(t)
	for _, m := range []Method{MethodAuto, MethodStat, MethodReaddir} {
		t.Run(string(m), func(t *testing.T) {
			if m != MethodReaddir {
				requireStatSize(t, pfs)
			}
			for _, k := range []int{1, 37, 1000} {
				before, _, err := pfs.CountMethod(pid, m)
				if err != nil {
					t.Fatalf("count before: %v", err)
				}
				files := openFiles(t, k)
				after, used, err := pfs.CountMethod(pid, m)
				closeFiles(files)
				if err != nil {
					t.Fatalf("count after: %v", err)
				}
				if after-before != k {
					t.Errorf("k=%d: count moved by %d (%d -> %d), want %d", k, after-before, before, after, k)
				}
				want := m
				if m == MethodAuto {
					want = MethodStat
				}
				if used != want {
					t.Errorf("method = %s, want %s", used, want)
				}
			}
		})
	}
}

func TestCountMethodsAgree(t *testing.T) {
	pfs := newProcFS(t)
	requireStatSize(t, pfs)
	// PID 1 is long-lived; the counts may differ only by what it opened
	// between the two calls, so compare our own process instead, where
	// readdir sees one more descriptor: the one it reads through.
	pid := os.Getpid()
	s, _, err := pfs.CountMethod(pid, MethodStat)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := pfs.CountMethod(pid, MethodReaddir)
	if err != nil {
		t.Fatal(err)
	}
	if r != s+1 {
		t.Errorf("readdir = %d, want stat (%d) + 1 (its own directory descriptor)", r, s)
	}
}

// makeFixture lays out a fake proc root <root>/<pid>/fd/<0..n-1>.
func makeFixture(t *testing.T, pid, n int) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, strconv.Itoa(pid), "fd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, strconv.Itoa(pid), "comm"), []byte("fixture\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFixtureNotProcfsUsesFallback(t *testing.T) {
	for _, n := range []int{0, 1, 7, 300} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			root := makeFixture(t, 42, n)
			pfs, err := NewFS(root)
			if err != nil {
				t.Fatal(err)
			}
			if pfs.IsProcfs() {
				t.Fatalf("temp dir %s detected as procfs", root)
			}
			var st unix.Stat_t
			if err := unix.Stat(filepath.Join(root, "42", "fd"), &st); err != nil {
				t.Fatal(err)
			}
			if n > 0 && st.Size <= 0 {
				t.Logf("note: this filesystem reports directory size %d", st.Size)
			}
			got, m, err := pfs.Count(42)
			if err != nil {
				t.Fatalf("Count: %v", err)
			}
			if got != n || m != MethodReaddir {
				t.Errorf("Count = %d %s, want %d readdir (stat size was %d)", got, m, n, st.Size)
			}
			if _, _, err := pfs.CountMethod(42, MethodStat); !errors.Is(err, ErrNotProcfs) {
				t.Errorf("CountMethod(stat) error = %v, want ErrNotProcfs", err)
			}
		})
	}
}

func TestMissingProcess(t *testing.T) {
	pfs := newProcFS(t)
	for _, m := range []Method{MethodAuto, MethodStat, MethodReaddir} {
		for _, pid := range []int{1<<31 - 1, -1, 0} {
			_, _, err := pfs.CountMethod(pid, m)
			if !errors.Is(err, ErrNoProcess) {
				t.Errorf("%s pid %d: error = %v, want ErrNoProcess", m, pid, err)
			}
			if pid > 0 && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s pid %d: error = %v, want it to wrap ENOENT too", m, pid, err)
			}
		}
	}
}

func TestZombieChild(t *testing.T) {
	pfs := newProcFS(t)
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait() // reaped only at the end
	pid := cmd.Process.Pid
	waitState(t, pid, 'Z')
	for _, m := range []Method{MethodAuto, MethodReaddir} {
		n, used, err := pfs.CountMethod(pid, m)
		if err != nil || n != 0 {
			t.Errorf("%s: zombie count = %d %s %v, want 0 and no error", m, n, used, err)
		}
		if m == MethodAuto && used != MethodReaddir {
			t.Errorf("auto on a zombie used %s, want readdir (stat size is 0)", used)
		}
	}
	if pfs.StatSizeSupported() {
		if n, _, err := pfs.CountMethod(pid, MethodStat); err != nil || n != 0 {
			t.Errorf("stat: zombie count = %d %v, want 0", n, err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pfs.Count(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("after reaping: error = %v, want ErrNoProcess", err)
	}
}

// waitState polls /proc/PID/stat until the process is in state s.
func waitState(t *testing.T, pid int, s byte) {
	t.Helper()
	polltest.Until(t, fmt.Sprintf("pid %d to reach state %c", pid, s), func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		i := bytes.LastIndexByte(b, ')')
		return err == nil && i > 0 && i+2 < len(b) && b[i+2] == s
	})
}

func TestThreadWithOwnTable(t *testing.T) {
	pfs := newProcFS(t)
	pid := os.Getpid()
	const k = 5
	count := func(tid int) (int, error) {
		n, _, err := pfs.CountTask(pid, tid, MethodReaddir)
		return n, err
	}
	tid, before, after := ownTableThread(t, k, count)
	if after-before != k {
		t.Errorf("thread table moved by %d, want %d", after-before, k)
	}
	tables, grouping, err := pfs.Tables(pid, MethodAuto)
	if err != nil {
		t.Fatalf("Tables: %v", err)
	}
	t.Logf("grouping %s, tables %+v", grouping, tables)
	if len(tables) < 2 {
		t.Fatalf("got %d tables, want the process's and the thread's", len(tables))
	}
	if !slices.Contains(tables[0].TIDs, pid) {
		t.Errorf("first table %v does not hold the leader %d", tables[0].TIDs, pid)
	}
	var own *Table
	for i := range tables[1:] {
		if slices.Contains(tables[1+i].TIDs, tid) {
			own = &tables[1+i]
		}
	}
	if own == nil {
		t.Fatalf("thread %d not in a table of its own: %+v", tid, tables)
	}
	// The readdir counts inside the thread saw their own directory
	// descriptor; the table at rest holds one less.
	if want := after - 1; own.FDs != want {
		t.Errorf("thread table FDs = %d, want %d", own.FDs, want)
	}

	// fdcount --threads shows the thread's table as a row of its own.
	var out bytes.Buffer
	if err := Run(context.Background(), Config{PIDs: []int{pid}, Threads: true, Stdout: &out}); err != nil {
		t.Fatalf("Run --threads: %v", err)
	}
	row := regexp.MustCompile(`(?m)^` + strconv.Itoa(pid) + `\s+` + strconv.Itoa(tid) + `\s+\S+\s+` + strconv.Itoa(own.FDs) + `\s+stat\s+\d+$`)
	if !row.MatchString(out.String()) {
		t.Errorf("--threads output lacks a row for thread %d with %d fds:\n%s", tid, own.FDs, out.String())
	}

	// Without kcmp (a mount of another PID namespace), threads are grouped
	// by count; this thread's table holds k more than the leader's did.
	noKcmp := *pfs
	noKcmp.ownPIDs = false
	tables, grouping, err = noKcmp.Tables(pid, MethodAuto)
	if err != nil || grouping != GroupingCount {
		t.Fatalf("Tables without kcmp: %v, grouping %q", err, grouping)
	}
	if len(tables) < 2 || slices.Contains(tables[0].TIDs, tid) {
		t.Errorf("without kcmp, thread %d not in a table of its own: %+v", tid, tables)
	}
}

// waitGone waits (bounded) until thread tid of pid has exited.
func waitGone(t *testing.T, pid, tid int) {
	t.Helper()
	if tid <= 0 {
		return
	}
	p := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("thread %d did not exit", tid)
}

func TestTablesSingleTable(t *testing.T) {
	pfs := newProcFS(t)
	pid := os.Getpid()
	tables, grouping, err := pfs.Tables(pid, MethodAuto)
	if err != nil {
		t.Fatal(err)
	}
	if grouping != GroupingKcmp {
		t.Logf("kcmp unavailable, grouping %s", grouping)
	}
	tids, err := pfs.TIDs(pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || len(tables[0].TIDs) != len(tids) {
		t.Errorf("tables = %+v, want one table holding all %d threads %v", tables, len(tids), tids)
	}
}

func TestPIDsAndComm(t *testing.T) {
	pfs := newProcFS(t)
	pids, err := pfs.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, os.Getpid()) || !slices.Contains(pids, 1) {
		t.Errorf("PIDs %v lacks 1 or self %d", pids, os.Getpid())
	}
	comm, err := pfs.Comm(os.Getpid(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Base(os.Args[0]); !strings.HasPrefix(want, comm) {
		t.Errorf("Comm = %q, want a prefix of %q", comm, want)
	}
}

func TestSelf(t *testing.T) {
	warmUp(t)
	before, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	files := openFiles(t, 3)
	defer closeFiles(files)
	after, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if after-before != 3 {
		t.Errorf("Self moved by %d, want 3", after-before)
	}
}

// TestParallelReaddirAgrees counts children holding many descriptors, dense
// and sparse, with the stat fast path and with readdir by 1, 2, 3 and 8
// readers: every count must agree.
func TestParallelReaddirAgrees(t *testing.T) {
	base := newProcFS(t)
	specs := []string{"0", "2700", "5000", "sparse"}
	if !testing.Short() {
		specs = append(specs, "19000")
	}
	for _, spec := range specs {
		t.Run(spec, func(t *testing.T) {
			pid := startHolderSpec(t, spec)
			names, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
			if err != nil {
				t.Fatal(err)
			}
			want := len(names)
			if n, _, err := base.CountMethod(pid, MethodReaddir); err != nil || n != want {
				t.Errorf("default workers: readdir = %d %v, want %d", n, err, want)
			}
			if base.StatSizeSupported() {
				if n, _, err := base.CountMethod(pid, MethodStat); err != nil || n != want {
					t.Errorf("stat = %d %v, want %d", n, err, want)
				}
			}
			for _, w := range []int{1, 2, 3, 8} {
				pfs, err := NewFSOptions("", Options{Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				if n, _, err := pfs.CountMethod(pid, MethodReaddir); err != nil || n != want {
					t.Errorf("workers %d: readdir = %d %v, want %d", w, n, err, want)
				}
			}
		})
	}
}

// ownTableThread starts a thread (not the leader) that unshares its descriptor table and opens k
// more descriptors; it returns the thread ID and ends the thread at cleanup. With count, it also
// returns count's figures for the thread, taken on the thread (so that a readdir sees its own
// directory descriptor in the thread's table) before and after the k opens.
func ownTableThread(t *testing.T, k int, count func(tid int) (int, error)) (tid, before, after int) {
	t.Helper()
	pid := os.Getpid()
	ready := make(chan ownTable)
	done := make(chan struct{})
	exited := make(chan struct{})
	worker := func() {
		defer close(exited)
		// Never unlocked: the runtime ends this thread when the goroutine
		// returns, so its private table never serves other goroutines.
		runtime.LockOSThread()
		fds, r := openOwnTable(k, count)
		ready <- r
		<-done
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	go func() {
		// The thread must not be the leader (its table is /proc/PID/fd): if
		// this goroutine landed on the main thread, pin it there so the
		// worker's goroutine starts on another thread.
		runtime.LockOSThread()
		if unix.Gettid() == pid {
			go worker()
			<-exited
			runtime.UnlockOSThread()
			return
		}
		runtime.UnlockOSThread()
		worker() // locks again, for good
	}()
	r := <-ready
	t.Cleanup(func() {
		close(done)
		<-exited
		waitGone(t, pid, r.tid) // the runtime ends the thread after the goroutine
	})
	if r.err != nil {
		t.Fatalf("thread: %v", r.err)
	}
	return r.tid, r.before, r.after
}

// ownTable is what ownTableThread's thread reports once its table is ready.
type ownTable struct {
	tid, before, after int
	err                error
}

// openOwnTable unshares the calling thread's descriptor table and opens k descriptors in it,
// counting the table before and after with count if it is not nil.
func openOwnTable(k int, count func(tid int) (int, error)) (fds []int, r ownTable) {
	if r.err = unix.Unshare(unix.CLONE_FILES); r.err != nil {
		return nil, r
	}
	r.tid = unix.Gettid()
	if count != nil {
		if r.before, r.err = count(r.tid); r.err != nil {
			return nil, r
		}
	}
	for range k {
		fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			r.err = err
			return fds, r
		}
		fds = append(fds, fd)
	}
	if count != nil {
		r.after, r.err = count(r.tid)
	}
	return fds, r
}
