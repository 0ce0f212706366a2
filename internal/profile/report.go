package profile

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/otelbench/otelbench/internal/reportfile"
)

// HistBuckets is the number of log2 latency buckets: bucket i counts
// syscalls that took [2^i, 2^(i+1)) nanoseconds (bucket 0 also holds 0 ns).
const HistBuckets = 48

// SyscallStat aggregates one syscall (of the whole target, or of a thread).
// Count and Errors are exact. With latency sampling (SyscallReport.
// LatencySample > 1) the time figures are estimated from the Timed calls:
// each stands for about LatencySample calls in Hist, and TotalNs is their
// mean time × Count.
type SyscallStat struct {
	Nr     int    `json:"nr"`
	Name   string `json:"name"`
	Count  uint64 `json:"count"`
	Errors uint64 `json:"errors"`
	// TotalNs is the time spent in the Count calls (of those that return).
	TotalNs uint64 `json:"total_ns"`
	// MaxNs is the longest timed call.
	MaxNs uint64 `json:"max_ns"`
	// Timed is how many calls were timed: all but exit and exit_group
	// without sampling, about 1 in LatencySample with.
	Timed uint64 `json:"timed"`
	// Hist counts calls per log2 latency bucket (weighted by sampling).
	Hist [HistBuckets]uint64 `json:"-"`
	// weight is the number of calls the timed ones stand for.
	weight uint64
}

// finishStats scales the weighted time of the timed calls to all calls
// counted: total = weighted time × calls / weight (a ratio estimate, exact
// when every call is timed). Calls never timed (exit, exit_group, or too
// rare to be sampled) have no time.
func finishStats(st *SyscallStat) {
	if st.weight == 0 {
		st.TotalNs = 0
		return
	}
	if st.weight != st.Count {
		st.TotalNs = uint64(math.Round(float64(st.TotalNs) * float64(st.Count) / float64(st.weight)))
	}
}

// Avg returns the mean latency: TotalNs over the calls it covers.
func (s SyscallStat) Avg() time.Duration {
	if s.Count == 0 || s.Timed == 0 {
		return 0
	}
	return time.Duration(s.TotalNs / s.Count)
}

// Percentile estimates the q-quantile (0 < q <= 1) of latency from the log2
// histogram, interpolating linearly inside the bucket and never above the
// observed maximum. The estimate is within a factor of 2 of the truth.
func (s SyscallStat) Percentile(q float64) time.Duration {
	var n uint64
	for _, c := range s.Hist {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := q * float64(n)
	var cum float64
	for i, c := range s.Hist {
		if c == 0 {
			continue
		}
		if cum+float64(c) >= rank {
			lo, hi := math.Ldexp(1, i), math.Ldexp(1, i+1)
			if i == 0 {
				lo = 0
			}
			v := lo + (hi-lo)*(rank-cum)/float64(c)
			return time.Duration(math.Min(v, float64(s.MaxNs)))
		}
		cum += float64(c)
	}
	return time.Duration(s.MaxNs)
}

// ThreadStat is one thread's aggregate per syscall (--per-thread).
type ThreadStat struct {
	PID      int           `json:"pid"`
	TID      int           `json:"tid"`
	Comm     string        `json:"comm"`
	Count    uint64        `json:"count"`
	TotalNs  uint64        `json:"total_ns"`
	Syscalls []SyscallStat `json:"syscalls"`
}

// StackCount is how often (and how long) one syscall was made from one user
// stack.
type StackCount struct {
	PID     int
	Syscall string
	Count   uint64
	TotalNs uint64
	// Frames, leaf first: raw addresses and their symbolization.
	Frames []Frame
}

// Frame is one symbolized stack frame.
type Frame struct {
	Addr     uint64
	Function string
	File     string
	Line     int
	Kernel   bool
	Mapping  *MappingInfo
}

// MappingInfo describes the file an address was mapped from.
type MappingInfo struct {
	PID                int
	Start, End, Offset uint64
	Path               string
}

// SyscallReport is the result of TraceSyscalls.
type SyscallReport struct {
	PID      int        `json:"pid"`
	Exe      string     `json:"exe,omitempty"`
	Command  []string   `json:"command,omitempty"`
	Children []int      `json:"children,omitempty"`
	Arch     string     `json:"arch"`
	Attach   AttachMode `json:"attach"`
	// NoLatency marks a count-only trace: no times, no histograms.
	NoLatency bool `json:"no_latency,omitempty"`
	// LatencySample is the longest latency sampling period used: 1 = every
	// call timed; N = for some of the trace, only calls starting in windows
	// covering 1/N of the time were timed, and times are scaled from them.
	// Counts and errors are exact either way. 0 with NoLatency.
	LatencySample int `json:"latency_sample,omitempty"`
	// LatencyAuto says the sampling period followed the call rate.
	LatencyAuto bool          `json:"latency_sample_auto,omitempty"`
	Started     time.Time     `json:"started"`
	Elapsed     time.Duration `json:"-"`
	// ExitCode of Command: its exit status, 128+N if signal N killed it,
	// -1 if the trace ended first and interrupted it, or in PID mode.
	ExitCode int           `json:"exit_code"`
	Syscalls []SyscallStat `json:"-"`
	Threads  []ThreadStat  `json:"threads,omitempty"`
	Stacks   []StackCount  `json:"-"`
	// Lost counts events the kernel side could not record (stack map full,
	// and the like); non-zero means the stacks are incomplete.
	Lost map[string]uint64 `json:"lost,omitempty"`
	// Warnings say what else went wrong during the trace.
	Warnings []string `json:"warnings,omitempty"`
}

// Total returns the number of syscalls counted.
func (r *SyscallReport) Total() uint64 {
	var n uint64
	for _, s := range r.Syscalls {
		n += s.Count
	}
	return n
}

// Timed returns the number of syscalls timed.
func (r *SyscallReport) Timed() uint64 {
	var n uint64
	for _, s := range r.Syscalls {
		n += s.Timed
	}
	return n
}

// TotalNs returns the time spent in all counted syscalls.
func (r *SyscallReport) TotalNs() uint64 {
	var n uint64
	for _, s := range r.Syscalls {
		n += s.TotalNs
	}
	return n
}

// Syscall returns the aggregate of the named syscall.
func (r *SyscallReport) Syscall(name string) (SyscallStat, bool) {
	for _, s := range r.Syscalls {
		if s.Name == name {
			return s, true
		}
	}
	return SyscallStat{}, false
}

// SortKey orders the rows of a report.
type SortKey string

// Sort keys: total time in the syscall (the default, like perf trace -s),
// calls (like syscount), errors, or mean latency.
const (
	SortTime   SortKey = "time"
	SortCount  SortKey = "count"
	SortErrors SortKey = "errors"
	SortAvg    SortKey = "avg"
)

// ParseSortKey checks a --sort value.
func ParseSortKey(s string) (SortKey, error) {
	switch k := SortKey(s); k {
	case SortTime, SortCount, SortErrors, SortAvg:
		return k, nil
	}
	return "", fmt.Errorf("sort key %q: want time, count, errors or avg", s)
}

// Sort orders the syscalls of the report (and of each thread) by key,
// largest first; ties go by count, then name.
func (r *SyscallReport) Sort(key SortKey) {
	sortSyscallsBy(r.Syscalls, key)
	for _, t := range r.Threads {
		sortSyscallsBy(t.Syscalls, key)
	}
}

// sortSyscalls orders by total time, then count, then name.
func sortSyscalls(ss []SyscallStat) { sortSyscallsBy(ss, SortTime) }

func sortSyscallsBy(ss []SyscallStat, key SortKey) {
	metric := func(s SyscallStat) uint64 {
		switch key {
		case SortCount:
			return s.Count
		case SortErrors:
			return s.Errors
		case SortAvg:
			return uint64(s.Avg())
		}
		return s.TotalNs
	}
	sort.SliceStable(ss, func(i, j int) bool {
		a, b := ss[i], ss[j]
		if ma, mb := metric(a), metric(b); ma != mb {
			return ma > mb
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Name < b.Name
	})
}

// WriteText writes a table like perf trace -s, sorted by total time; top
// limits the rows (0 = all).
func (r *SyscallReport) WriteText(w io.Writer, top int) error {
	secs := r.Elapsed.Seconds()
	who := fmt.Sprintf("pid %d", r.PID)
	if len(r.Command) > 0 {
		who = fmt.Sprintf("pid %d (%s)", r.PID, strings.Join(r.Command, " "))
	}
	if len(r.Children) > 0 {
		who += fmt.Sprintf(" + %d children", len(r.Children))
	}
	table := writeSyscallTable
	if r.NoLatency {
		fmt.Fprintf(w, "%s: %d syscalls in %.3fs (%.0f/s), counted without timing\n\n",
			who, r.Total(), secs, rate(r.Total(), secs))
		table = writeCountTable
	} else {
		fmt.Fprintf(w, "%s: %d syscalls in %.3fs (%.0f/s), %.3f ms in syscalls\n",
			who, r.Total(), secs, rate(r.Total(), secs), float64(r.TotalNs())/1e6)
		if r.LatencySample > 1 {
			how := "fixed"
			if r.LatencyAuto {
				how = "auto, at the highest call rate"
			}
			fmt.Fprintf(w, "latency sampled 1/%d (%s): times estimated from %d timed calls; counts and errors exact\n",
				r.LatencySample, how, r.Timed())
		}
		fmt.Fprintln(w)
	}
	if err := table(w, r.Syscalls, r.TotalNs(), secs, top); err != nil {
		return err
	}
	for _, t := range r.Threads {
		fmt.Fprintf(w, "\nthread %d (%s) of pid %d: %d syscalls, %.3f ms\n", t.TID, t.Comm, t.PID, t.Count, float64(t.TotalNs)/1e6)
		if err := table(w, t.Syscalls, t.TotalNs, secs, top); err != nil {
			return err
		}
	}
	for what, n := range r.Lost {
		if n > 0 {
			fmt.Fprintf(w, "\nwarning: %d %s\n", n, what)
		}
	}
	for _, msg := range r.Warnings {
		fmt.Fprintf(w, "\nwarning: %s\n", msg)
	}
	return nil
}

func writeSyscallTable(w io.Writer, ss []SyscallStat, totalNs uint64, secs float64, top int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "syscall\tcalls\trate/s\terrors\ttotal ms\tavg us\tp50 us\tp99 us\tmax us\t% time\t")
	for i, s := range ss {
		if top > 0 && i >= top {
			break
		}
		pct := 0.0
		if totalNs > 0 {
			pct = 100 * float64(s.TotalNs) / float64(totalNs)
		}
		if s.Timed == 0 && s.Count > 0 {
			// Never timed: exit and exit_group, or calls too rare to
			// fall in a sampling window.
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t-\t-\t-\t-\t-\t-\t\n", s.Name, s.Count, rate(s.Count, secs), s.Errors)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t\n",
			s.Name, s.Count, rate(s.Count, secs), s.Errors, float64(s.TotalNs)/1e6,
			us(s.Avg()), us(s.Percentile(0.5)), us(s.Percentile(0.99)), float64(s.MaxNs)/1e3, pct)
	}
	if top > 0 && len(ss) > top {
		fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\t\t\t\t\t\n", len(ss)-top)
	}
	return tw.Flush()
}

// writeCountTable is the table of a count-only trace: no time columns, and
// the share is of calls.
func writeCountTable(w io.Writer, ss []SyscallStat, _ uint64, secs float64, top int) error {
	var total uint64
	for _, s := range ss {
		total += s.Count
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "syscall\tcalls\trate/s\terrors\t% calls\t")
	for i, s := range ss {
		if top > 0 && i >= top {
			fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\n", len(ss)-top)
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%.1f\t\n", s.Name, s.Count, rate(s.Count, secs), s.Errors,
			100*float64(s.Count)/float64(max(total, 1)))
	}
	return tw.Flush()
}

func rate(n uint64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// SyscallReportSchema names the JSON layout of WriteJSON.
const SyscallReportSchema = "otelbench.profile.syscalls/v1"

type jsonSyscall struct {
	SyscallStat
	RatePerSec float64  `json:"rate_per_second"`
	AvgNs      int64    `json:"avg_ns"`
	P50Ns      int64    `json:"p50_ns"`
	P99Ns      int64    `json:"p99_ns"`
	PctTime    float64  `json:"pct_time"`
	Hist       []uint64 `json:"histogram_log2_ns"`
}

// WriteJSON writes the report as JSON (schema SyscallReportSchema). The
// histogram has one count per log2 bucket: index i counts [2^i, 2^(i+1)) ns.
func (r *SyscallReport) WriteJSON(w io.Writer) error {
	secs := r.Elapsed.Seconds()
	conv := func(ss []SyscallStat, totalNs uint64) []jsonSyscall {
		out := make([]jsonSyscall, 0, len(ss))
		for _, s := range ss {
			j := jsonSyscall{SyscallStat: s, RatePerSec: rate(s.Count, secs), AvgNs: int64(s.Avg()),
				P50Ns: int64(s.Percentile(0.5)), P99Ns: int64(s.Percentile(0.99))}
			if totalNs > 0 {
				j.PctTime = 100 * float64(s.TotalNs) / float64(totalNs)
			}
			last := len(s.Hist)
			for last > 0 && s.Hist[last-1] == 0 {
				last--
			}
			j.Hist = append([]uint64{}, s.Hist[:last]...)
			out = append(out, j)
		}
		return out
	}
	type jsonThread struct {
		ThreadStat
		Syscalls []jsonSyscall `json:"syscalls"`
	}
	threads := make([]jsonThread, 0, len(r.Threads))
	for _, t := range r.Threads {
		threads = append(threads, jsonThread{ThreadStat: t, Syscalls: conv(t.Syscalls, t.TotalNs)})
	}
	type alias SyscallReport
	v := struct {
		Schema string `json:"schema"`
		*alias
		ElapsedSeconds float64       `json:"elapsed_seconds"`
		TotalSyscalls  uint64        `json:"total_syscalls"`
		TotalTimed     uint64        `json:"total_timed"`
		TotalNs        uint64        `json:"total_ns"`
		Syscalls       []jsonSyscall `json:"syscalls"`
		Threads        []jsonThread  `json:"threads,omitempty"`
	}{SyscallReportSchema, (*alias)(r), secs, r.Total(), r.Timed(), r.TotalNs(), conv(r.Syscalls, r.TotalNs()), threads}
	return reportfile.Write(w, v)
}

func sortThreads(ts []ThreadStat) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].TotalNs != ts[j].TotalNs {
			return ts[i].TotalNs > ts[j].TotalNs
		}
		return ts[i].TID < ts[j].TID
	})
}
