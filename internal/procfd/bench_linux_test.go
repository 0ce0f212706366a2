package procfd

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/abstats"
	"github.com/otelbench/otelbench/internal/childtest"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// holderEnv makes the test binary a descriptor holder (see runHolder).
const holderEnv = "PROCFD_TEST_HOLD_FDS"

func init() {
	// Not TestMain: a holder must not run goleak or the tests.
	if v := os.Getenv(holderEnv); v != "" {
		os.Exit(runHolder(v))
	}
}

// sparseFDs are the descriptor numbers a "sparse" holder fills: runs and
// gaps that cross parallel reading ranges.
var sparseFDs = func() []int {
	var fds []int
	for fd := 10; fd < 3000; fd++ {
		fds = append(fds, fd)
	}
	fds = append(fds, 4095, 4096, 4097, 6143, 6144, 9000)
	for fd := 12000; fd < 12500; fd += 3 {
		fds = append(fds, fd)
	}
	return append(fds, 19990)
}()

// runHolder raises RLIMIT_NOFILE's soft limit to the hard one, holds more
// open descriptors (dups of /dev/null: spec is a count, or "sparse" for
// sparseFDs), says "ready" and waits for stdin to close.
func runHolder(spec string) int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if strings.HasPrefix(spec, "high:") {
		to, _ := strconv.Atoi(strings.TrimPrefix(spec, "high:"))
		if err := unix.Dup2(fd, to); err != nil {
			fmt.Fprintf(os.Stderr, "dup2 %d: %v\n", to, err)
			return 1
		}
	} else if spec == "sparse" {
		for _, to := range sparseFDs {
			if err := unix.Dup2(fd, to); err != nil {
				fmt.Fprintf(os.Stderr, "dup2 %d: %v\n", to, err)
				return 1
			}
		}
	} else {
		n, _ := strconv.Atoi(spec)
		for i := 1; i < n; i++ {
			if _, err := unix.Dup(fd); err != nil {
				fmt.Fprintf(os.Stderr, "dup %d: %v\n", i, err)
				return 1
			}
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startHolder starts a child process holding n extra descriptors and returns
// its PID; the child exits at the end of the benchmark.
func startHolder(tb testing.TB, n int) int {
	tb.Helper()
	return startHolderSpec(tb, strconv.Itoa(n))
}

func startHolderSpec(tb testing.TB, spec string) int {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), holderEnv+"="+spec)
	cmd.Stderr = os.Stderr
	_, stdout := childtest.Start(tb, cmd)
	line, err := stdout.ReadString('\n')
	if err != nil || line != "ready\n" {
		tb.Fatalf("holder of %s fds: %q %v", spec, line, err)
	}
	return cmd.Process.Pid
}

// BenchmarkCount counts a child holding N descriptors with each method, side
// by side: the stat fast path, the getdents64 fallback (one reader, the
// default, and two: readdir-2w), prometheus/procfs
// (FileDescriptorsLen, which has the same fast path, and the same function
// forced onto its Readdirnames path by a non-procfs root that symlinks to
// the real /proc/PID), and `ls /proc/PID/fd | wc -l`.
func BenchmarkCount(b *testing.B) {
	for _, n := range benchSizes() {
		want, methods := benchMethods(b, n)
		for _, m := range methods {
			b.Run(fmt.Sprintf("N=%d/%s", n, m.name), func(b *testing.B) {
				got, err := m.count()
				if err != nil || got < want-1 || got > want+1 {
					b.Fatalf("%s counted %d, %v; want %d", m.name, got, err, want)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.count(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fd")
			})
		}
	}
}

// BenchmarkSideBySide times every method once per iteration, round-robin,
// so that the load of a shared machine hits all of them alike, and reports
// each method's median time (µs) and the median of the per-round ratios of
// prometheus/procfs's readdir path to this package's fallbacks (readdir, and
// bpf when the BPF counter loads: as root). Run it with a fixed count:
// -benchtime=50x.
func BenchmarkSideBySide(b *testing.B) {
	for _, n := range benchSizes() {
		want, methods := benchMethods(b, n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			times := make([][]float64, len(methods))
			var ratio, ratioPar, ratioBPF, readdirBPF []float64
			round := make([]float64, len(methods))
			rng := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				// A random order per round: ls-wc forks processes that evict
				// the caches the method after it would find warm.
				for _, i := range rng.Perm(len(methods)) {
					m := methods[i]
					t0 := time.Now()
					got, err := m.count()
					round[i] = float64(time.Since(t0).Nanoseconds()) / 1e3
					if err != nil || got < want-1 || got > want+1 {
						b.Fatalf("%s counted %d, %v; want %d", m.name, got, err, want)
					}
					times[i] = append(times[i], round[i])
				}
				ratio = append(ratio, round[4]/round[1])
				ratioPar = append(ratioPar, round[4]/round[2])
				if len(methods) > 6 {
					ratioBPF = append(ratioBPF, round[4]/round[6])
					readdirBPF = append(readdirBPF, round[1]/round[6])
				}
			}
			for i, m := range methods {
				b.ReportMetric(abstats.Median(times[i]), m.name+"-µs")
			}
			b.ReportMetric(abstats.Median(ratio), "procfs-readdir/readdir")
			b.ReportMetric(abstats.Median(ratioPar), "procfs-readdir/readdir-2w")
			if len(ratioBPF) > 0 {
				b.ReportMetric(abstats.Median(ratioBPF), "procfs-readdir/bpf")
				b.ReportMetric(abstats.Median(readdirBPF), "readdir/bpf")
			}
		})
	}
}

func benchSizes() []int {
	if testing.Short() {
		return []int{100, 1000}
	}
	return []int{100, 1000, 10000, 19000}
}

type benchMethod struct {
	name  string
	count func() (int, error)
}

// benchMethods starts a child holding n more descriptors and returns its
// descriptor count and the methods to count it with (the order is relied
// on by BenchmarkSideBySide).
func benchMethods(b *testing.B, n int) (int, []benchMethod) {
	pfs, err := NewFS("")
	if err != nil {
		b.Fatal(err)
	}
	par, err := NewFSOptions("", Options{Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pfs.Close() })
	pid := startHolder(b, n)
	want, _, err := pfs.CountMethod(pid, MethodReaddir)
	if err != nil || want < n {
		b.Fatalf("holder %d: %d fds, %v", pid, want, err)
	}
	promReal, err := procfs.NewFS("/proc")
	if err != nil {
		b.Fatal(err)
	}
	// A root that is not procfs makes procfs.FS.isReal false, so
	// FileDescriptorsLen takes its Readdirnames path through the symlink
	// into the real /proc/PID: the library's own fallback code.
	fakeRoot := b.TempDir()
	if err := os.Symlink(filepath.Join("/proc", strconv.Itoa(pid)), filepath.Join(fakeRoot, strconv.Itoa(pid))); err != nil {
		b.Fatal(err)
	}
	promReaddir, err := procfs.NewFS(fakeRoot)
	if err != nil {
		b.Fatal(err)
	}
	methods := []benchMethod{
		{"stat", func() (int, error) { c, _, err := pfs.CountMethod(pid, MethodStat); return c, err }},
		{"readdir", func() (int, error) { c, _, err := pfs.CountMethod(pid, MethodReaddir); return c, err }},
		{"readdir-2w", func() (int, error) { c, _, err := par.CountMethod(pid, MethodReaddir); return c, err }},
		{"procfs-len", func() (int, error) { return procLen(promReal, pid) }},
		{"procfs-readdir", func() (int, error) { return procLen(promReaddir, pid) }},
		{"ls-wc", func() (int, error) { return lsWC(pid) }},
	}
	// The BPF counter, when it loads (root): loaded here, so the first
	// count of the benchmark does not pay for the load.
	if _, _, err := pfs.CountMethod(pid, MethodBPF); err == nil {
		methods = append(methods, benchMethod{"bpf", func() (int, error) { c, _, err := pfs.CountMethod(pid, MethodBPF); return c, err }})
	} else {
		b.Logf("no bpf method: %v", err)
	}
	return want, methods
}

func procLen(fs procfs.FS, pid int) (int, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, err
	}
	return p.FileDescriptorsLen()
}

func lsWC(pid int) (int, error) {
	out, err := exec.Command("sh", "-c", "ls /proc/"+strconv.Itoa(pid)+"/fd | wc -l").Output()
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// BenchmarkAll counts every process on the machine, as fdcount --all does
// (without the output).
func BenchmarkAll(b *testing.B) {
	for _, m := range []Method{MethodAuto, MethodReaddir, MethodBPF} {
		b.Run(string(m), func(b *testing.B) {
			cfg := Config{All: true, Method: m}
			pfs, err := NewFS("")
			if err != nil {
				b.Fatal(err)
			}
			defer pfs.Close()
			if m == MethodBPF {
				if _, _, err := pfs.CountMethod(os.Getpid(), m); err != nil {
					b.Skipf("no bpf: %v", err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := collect(pfs, &cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCPUTime reports the CPU time of a count, user and system apart
// (getrusage of the whole process, so the garbage collector's work for the
// allocations of a method counts against it: each run ends with a GC).
func BenchmarkCPUTime(b *testing.B) {
	for _, n := range benchSizes() {
		_, methods := benchMethods(b, n)
		for _, m := range methods {
			if m.name == "ls-wc" {
				continue // its CPU is spent in child processes
			}
			b.Run(fmt.Sprintf("N=%d/%s", n, m.name), func(b *testing.B) {
				runtime.GC()
				u0, s0 := rusage(b)
				for b.Loop() {
					if _, err := m.count(); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				u1, s1 := rusage(b)
				b.ReportMetric(float64((u1-u0).Nanoseconds())/1e3/float64(b.N), "user-µs/op")
				b.ReportMetric(float64((s1-s0).Nanoseconds())/1e3/float64(b.N), "sys-µs/op")
			})
		}
	}
}

func rusage(b *testing.B) (user, sys time.Duration) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// BenchmarkStatCold times the stat fast path against tables of different
// sizes with the CPU caches disturbed the same way before every count (a
// write to each line of a buffer of -cold-mb MiB), in random order per
// round: "high" tables hold a few descriptors, the highest at fd 19990, so
// their fd bitmap is as large as that of 19k descriptors. It reports the
// median µs of each.
func BenchmarkStatCold(b *testing.B) {
	pfs, err := NewFS("")
	if err != nil {
		b.Fatal(err)
	}
	if !pfs.StatSizeSupported() {
		b.Skip("no stat size on this kernel")
	}
	specs := []string{"100", "1000", "19000", "high:19990"}
	pids := make([]int, len(specs))
	for i, s := range specs {
		pids[i] = startHolderSpec(b, s)
	}
	for _, mb := range []int{0, 4, 64} {
		b.Run(fmt.Sprintf("evict=%dMiB", mb), func(b *testing.B) {
			evict := make([]byte, mb<<20)
			times := make([][]float64, len(specs))
			rng := rand.New(rand.NewPCG(3, 4))
			for b.Loop() {
				for _, i := range rng.Perm(len(specs)) {
					for j := 0; j < len(evict); j += 64 {
						evict[j]++
					}
					t0 := time.Now()
					if _, _, err := pfs.CountMethod(pids[i], MethodStat); err != nil {
						b.Fatal(err)
					}
					times[i] = append(times[i], float64(time.Since(t0).Nanoseconds())/1e3)
				}
			}
			for i, s := range specs {
				b.ReportMetric(abstats.Median(times[i]), strings.ReplaceAll(s, ":", "")+"-µs")
			}
		})
	}
}
