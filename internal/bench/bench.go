package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/selfusage"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// DefaultCatchUp bounds the wait for projection after the load: a minute
// lets the default load's backlog drain on a 2-vCPU machine with room to spare.
const DefaultCatchUp = time.Minute

// Config configures Run.
type Config struct {
	// Load is the load to run; its Endpoint is replaced by the server's.
	Load loadgen.Config
	// Store configures the server's store, with the store's defaults: its Dir is the data
	// directory ("" means a temporary directory removed after the run), its Logger receives the
	// server's log (nil discards it). bench --traces-file defaults its TracesFile to
	// ingestsrv.DefaultTracesFile.
	Store store.Config
	// CatchUp is how long to wait after the load for projection to catch up, and to report
	// it (Result.Projection); 0 means DefaultCatchUp, negative does not wait.
	CatchUp time.Duration
}

// catchUp is CatchUp with its default: 0 is DefaultCatchUp, negative none.
func (c Config) catchUp() time.Duration {
	if c.CatchUp == 0 {
		return DefaultCatchUp
	}
	return max(c.CatchUp, 0)
}

// Validate checks the load config and the store's.
func (c Config) Validate() error {
	if err := c.Load.Validate(); err != nil {
		return err
	}
	st := c.Store
	if st.Dir == "" {
		st.Dir = os.TempDir() // Run makes one there
	}
	if err := st.Validate(); err != nil {
		return fmt.Errorf("%w: %w", loadgen.ErrInvalidConfig, err)
	}
	return nil
}

// SignalCheck compares, for one signal, what the generator saw acknowledged
// with what the server says it stored.
type SignalCheck struct {
	Signal         string `json:"signal"`
	RecordsAcked   int64  `json:"records_acked"`
	RecordsStored  int64  `json:"records_stored"`
	RequestsAcked  int64  `json:"requests_acked"` // 200 responses
	RequestsStored int64  `json:"requests_stored"`
}

// Lost returns acked minus stored records, 0 when the server stored every
// acknowledged record (it may store more: requests that timed out or were
// canceled in flight can still have been committed; see Extra).
func (c SignalCheck) Lost() int64 { return max(c.RecordsAcked-c.RecordsStored, 0) }

// Extra returns records stored beyond those acknowledged.
func (c SignalCheck) Extra() int64 { return max(c.RecordsStored-c.RecordsAcked, 0) }

// Result is the outcome of a bench run.
type Result struct {
	Load   *loadgen.Report `json:"load"`
	Checks []SignalCheck   `json:"checks"`
	// PeakRSSBytes is VmHWM of this process (server and generator).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// CPUSeconds is user+system CPU of this process during the load.
	CPUSeconds  float64 `json:"cpu_seconds"`
	DataDir     string  `json:"data_dir,omitempty"` // kept data, if any
	ServerError string  `json:"server_error,omitempty"`
	// Projection is how projection caught up after the load (nil when Config.CatchUp is 0).
	Projection *Projection `json:"projection,omitempty"`
}

// Projection reports the projector's catch-up after the load: the records still to project when
// the load ended, how long projecting them took, and the telemetry.db pages the projector
// wrote and read per 1,000 records it projected during the whole run.
type Projection struct {
	LagAtEnd      int64   `json:"lag_at_end_records"`
	CaughtUp      bool    `json:"caught_up"`
	Seconds       float64 `json:"catch_up_seconds"`
	RecordsPerSec float64 `json:"catch_up_records_per_second"`
	Projected     uint64  `json:"records_projected"`
	PagesWrittenK float64 `json:"pages_written_per_1000_records"`
	PagesReadK    float64 `json:"pages_read_per_1000_records"`
	LagAfterWait  int64   `json:"lag_after_wait_records"`
	// The process's CPU (user+system) over the catch-up, and the machine's idle and steal time
	// as fractions of all its CPUs' time then (/proc/stat). The rate swings with the host's
	// speed; these say whether the catch-up had the machine to itself and what a record cost.
	CPUSeconds   float64 `json:"catch_up_cpu_seconds"`
	MachineIdle  float64 `json:"catch_up_machine_idle"`
	MachineSteal float64 `json:"catch_up_machine_steal"`
}

// CPUPerRecord returns the process's CPU time per record projected during the catch-up, in
// microseconds (0 when none was).
func (p *Projection) CPUPerRecord() float64 {
	n := p.LagAtEnd - p.LagAfterWait
	if n <= 0 {
		return 0
	}
	return p.CPUSeconds / float64(n) * 1e6
}

// machineCPU is the machine's CPU time in seconds, summed over its CPUs (machineTimes).
type machineCPU struct{ total, idle, steal float64 }

// cpuTimes is the CPU time used so far by this process and by the machine.
type cpuTimes struct {
	process float64
	machine machineCPU
}

// cpuSeconds is this process's CPU time (user+system) in seconds.
func cpuSeconds() (float64, error) {
	d, err := selfusage.CPU()
	return d.Seconds(), err
}

// readCPU reads cpuTimes.
func readCPU() (cpuTimes, error) {
	var t cpuTimes
	var err error
	if t.process, err = cpuSeconds(); err != nil {
		return t, fmt.Errorf("read cpu time: %w", err)
	}
	if t.machine, err = machineTimes(); err != nil {
		return t, fmt.Errorf("read machine cpu time: %w", err)
	}
	return t, nil
}

// NothingLost reports whether every acknowledged record was stored.
func (r *Result) NothingLost() bool {
	for _, c := range r.Checks {
		if c.Lost() != 0 {
			return false
		}
	}
	return true
}

// ErrLost is returned by Result.Err when stored differs from acknowledged.
var ErrLost = errors.New("records lost")

// Err returns an error wrapping ErrLost if records were lost.
func (r *Result) Err() error {
	if r.NothingLost() {
		return nil
	}
	var lost int64
	for _, c := range r.Checks {
		lost += c.Lost()
	}
	return fmt.Errorf("%w: %d records acknowledged but not stored", ErrLost, lost)
}

// Run starts the server, runs the load, compares the counts and stops the
// server. Cancelling ctx stops the load early (the check still runs).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	res := &Result{}
	stcfg := cfg.Store
	if stcfg.Dir == "" {
		tmp, err := os.MkdirTemp("", "otelbench-bench-*")
		if err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
		defer os.RemoveAll(tmp)
		stcfg.Dir = tmp
	} else {
		res.DataDir = stcfg.Dir
	}
	if stcfg.Logger == nil {
		stcfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// The server outlives a Ctrl-C of the load: it runs on its own context
	// so that the stats can still be read, and is stopped below.
	srvCtx, stopSrv := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSrv()
	srv, err := ingestsrv.New(srvCtx, ingestsrv.Config{Config: stcfg, Addr: "127.0.0.1:0"})
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Close(context.Background())
		return nil, fmt.Errorf("listen: %w", err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(srvCtx, ln) }() // owned: stopSrv, then <-serveErr
	base := "http://" + ln.Addr().String()

	rep, checks, cpu, runErr := runAndCheck(ctx, cfg.Load, base)
	if catchUp := cfg.catchUp(); runErr == nil && catchUp > 0 {
		res.Projection, runErr = waitProjection(ctx, base, catchUp)
	}
	stopSrv()
	if err := <-serveErr; err != nil {
		res.ServerError = err.Error()
		runErr = errors.Join(runErr, fmt.Errorf("server: %w", err))
	}
	if runErr != nil {
		return nil, runErr
	}
	res.Load, res.Checks, res.CPUSeconds = rep, checks, cpu
	if res.PeakRSSBytes, err = selfusage.PeakRSS(); err != nil {
		return nil, fmt.Errorf("read peak rss: %w", err)
	}
	return res, nil
}

// runAndCheck runs the load against base and reads the server's stats.
func runAndCheck(ctx context.Context, lc loadgen.Config, base string) (*loadgen.Report, []SignalCheck, float64, error) {
	lc.Endpoint = base
	cpu0, err := cpuSeconds()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("read cpu time: %w", err)
	}
	rep, err := loadgen.Run(ctx, lc)
	if err != nil {
		return nil, nil, 0, err
	}
	cpu1, err := cpuSeconds()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("read cpu time: %w", err)
	}
	stats, err := fetchStats(base)
	if err != nil {
		return nil, nil, 0, err
	}
	var checks []SignalCheck
	for name, s := range rep.Signals {
		if rep.Config.Mix[name] == 0 && s.Requests == 0 {
			continue
		}
		st := stats.Signals[name]
		checks = append(checks, SignalCheck{Signal: name, RecordsAcked: s.RecordsAcked, RecordsStored: int64(st.Records),
			RequestsAcked: s.Status.S2xx, RequestsStored: int64(st.Requests)})
	}
	sortChecks(checks)
	return rep, checks, cpu1 - cpu0, nil
}

// waitProjection polls the server's stats until projection has caught up or wait has passed
// (or ctx ends), and reports it.
func waitProjection(ctx context.Context, base string, wait time.Duration) (*Projection, error) {
	st, err := fetchStats(base)
	if err != nil {
		return nil, err
	}
	p := &Projection{LagAtEnd: st.Projection.LagRecords}
	t0, err := readCPU()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for st.Projection.LagRecords > 0 && time.Since(start) < wait && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		if st, err = fetchStats(base); err != nil {
			return nil, err
		}
	}
	p.Seconds = time.Since(start).Seconds()
	t1, err := readCPU()
	if err != nil {
		return nil, err
	}
	p.CPUSeconds = t1.process - t0.process
	if d := t1.machine.total - t0.machine.total; d > 0 {
		// Clamped: /proc/stat's iowait, counted in idle, can go backwards (proc(5)).
		p.MachineIdle = min(max((t1.machine.idle-t0.machine.idle)/d, 0), 1)
		p.MachineSteal = min(max((t1.machine.steal-t0.machine.steal)/d, 0), 1)
	}
	p.CaughtUp, p.LagAfterWait = st.Projection.LagRecords == 0, st.Projection.LagRecords
	if p.CaughtUp && p.LagAtEnd > 0 {
		p.RecordsPerSec = float64(p.LagAtEnd) / p.Seconds
	}
	for _, s := range st.Signals {
		p.Projected += s.RecordsProjected
	}
	if p.Projected > 0 {
		k := float64(p.Projected) / 1000
		p.PagesWrittenK, p.PagesReadK = float64(st.Projection.PagesWritten)/k, float64(st.Projection.PagesRead)/k
	}
	return p, nil
}

// fetchStats reads GET /api/v1/stats.
func fetchStats(base string) (*ingestsrv.Stats, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(base + "/api/v1/stats")
	if err != nil {
		return nil, fmt.Errorf("get stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get stats: status %s", resp.Status)
	}
	var st ingestsrv.Stats
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		return nil, fmt.Errorf("decode stats: %w", err)
	}
	return &st, nil
}

func sortChecks(cs []SignalCheck) {
	// Signal order; a name Parse does not know gets 0 and sorts first.
	order := func(name string) signal.Signal { s, _ := signal.Parse(name); return s }
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && order(cs[j].Signal) < order(cs[j-1].Signal); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// WriteText writes the load report, the process figures and the verdict.
func (r *Result) WriteText(w io.Writer) error {
	if err := r.Load.WriteText(w); err != nil {
		return err
	}
	secs := r.Load.DurationSeconds
	fmt.Fprintf(w, "\nserver (in-process: these figures include the load generator)\n")
	fmt.Fprintf(w, "  peak RSS (VmHWM)  %.1f MiB\n", float64(r.PeakRSSBytes)/(1<<20))
	fmt.Fprintf(w, "  CPU               %.2f s user+sys over %.2f s (%.2f cores)\n", r.CPUSeconds, secs, r.CPUSeconds/max(secs, 1e-9))
	if p := r.Projection; p != nil {
		fmt.Fprintf(w, "\nprojection into the relational tables (GET /api/v1/stats)\n")
		fmt.Fprintf(w, "  lag when the load ended  %d records\n", p.LagAtEnd)
		switch {
		case p.LagAtEnd == 0:
		case p.CaughtUp:
			fmt.Fprintf(w, "  caught up in             %.1f s (%.0f records/s)\n", p.Seconds, p.RecordsPerSec)
		default:
			fmt.Fprintf(w, "  not caught up in         %.1f s (%d records left)\n", p.Seconds, p.LagAfterWait)
		}
		if p.LagAtEnd > 0 {
			fmt.Fprintf(w, "  CPU while catching up    %.2f s (%.2f cores, %.2f µs a record); the machine %.0f%% idle, %.0f%% steal\n",
				p.CPUSeconds, p.CPUSeconds/max(p.Seconds, 1e-9), p.CPUPerRecord(), 100*p.MachineIdle, 100*p.MachineSteal)
		}
		fmt.Fprintf(w, "  pages per 1,000 records  %.0f written, %.0f read (%d records projected)\n",
			p.PagesWrittenK, p.PagesReadK, p.Projected)
	}
	fmt.Fprintf(w, "\nstored vs acknowledged (GET /api/v1/stats)\n")
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %-8s acked %d records in %d requests, stored %d records in %d requests", c.Signal,
			c.RecordsAcked, c.RequestsAcked, c.RecordsStored, c.RequestsStored)
		if d := c.RecordsStored - c.RecordsAcked; d != 0 {
			fmt.Fprintf(w, "  DIFFERENCE %+d records", d)
		}
		fmt.Fprintln(w)
	}
	if r.NothingLost() {
		var extra int64
		for _, c := range r.Checks {
			extra += c.Extra()
		}
		if extra > 0 {
			t := r.Load.Totals
			_, err := fmt.Fprintf(w, "nothing lost; %d more records stored than acknowledged (%d requests had no answer: "+
				"%d transport errors, %d canceled in flight; the server may have committed them)\n",
				extra, t.TransportErrors+t.Canceled, t.TransportErrors, t.Canceled)
			return err
		}
		_, err := fmt.Fprintln(w, "nothing lost")
		return err
	}
	_, err := fmt.Fprintf(w, "LOST: %v\n", r.Err())
	return err
}
