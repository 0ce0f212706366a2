package procfd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Schema names the JSON document Run writes with Config.JSON.
const Schema = "otelbench.fdcount/v1"

// Config configures Run, the engine of the fdcount command.
type Config struct {
	// ProcRoot is the proc mount to read ("" means DefaultProcRoot).
	ProcRoot string
	// Method is the counting method ("" means DefaultMethod).
	Method Method
	// PIDs are the processes to count, in output order.
	PIDs []int
	// All counts every process under ProcRoot, largest first.
	All bool
	// Top keeps only the Top largest processes with All (0 keeps all).
	Top int
	// Workers is how many goroutines read one large fd directory with the
	// readdir method (0 means DefaultWorkers; see Options.Workers).
	Workers int
	// Threads lists the descriptor tables of each process's threads.
	Threads bool
	// JSON writes JSON (one indented document; one line per round with
	// Watch) instead of a table.
	JSON bool
	// Watch repeats the count every Watch until the context is done
	// (0 counts once).
	Watch time.Duration
	// Rounds stops Watch after this many rounds (0: until cancelled).
	Rounds int
	// Stdout receives the table or JSON; Stderr one line per process that
	// could not be counted. Nil writers discard.
	Stdout, Stderr io.Writer
	// Now is the clock stamped on each round (nil means time.Now).
	Now func() time.Time
}

// Validate reports a configuration Run cannot carry out; the error wraps
// ErrInvalidConfig (or ErrInvalidMethod).
func (c *Config) Validate() error {
	if _, err := ParseMethod(string(c.Method)); err != nil {
		return err
	}
	switch {
	case c.All && len(c.PIDs) > 0:
		return fmt.Errorf("%w: give PIDs or --all, not both", ErrInvalidConfig)
	case !c.All && len(c.PIDs) == 0:
		return fmt.Errorf("%w: give at least one PID, or --all", ErrInvalidConfig)
	case c.Top < 0:
		return fmt.Errorf("%w: --top %d is negative", ErrInvalidConfig, c.Top)
	case c.Top > 0 && !c.All:
		return fmt.Errorf("%w: --top needs --all", ErrInvalidConfig)
	case c.Watch < 0:
		return fmt.Errorf("%w: --watch %s is negative", ErrInvalidConfig, c.Watch)
	case c.Workers < 0 || c.Workers > MaxWorkers:
		return fmt.Errorf("%w: --workers %d not in 0..%d", ErrInvalidConfig, c.Workers, MaxWorkers)
	case c.Rounds < 0:
		return fmt.Errorf("%w: --rounds %d is negative", ErrInvalidConfig, c.Rounds)
	}
	for _, pid := range c.PIDs {
		if pid <= 0 {
			return fmt.Errorf("%w: PID %d must be positive", ErrInvalidConfig, pid)
		}
	}
	return nil
}

// Snapshot is one round of counts.
type Snapshot struct {
	Schema    string         `json:"schema"`
	Time      time.Time      `json:"time"`
	ProcRoot  string         `json:"proc_root"`
	Procfs    bool           `json:"procfs"`
	Processes []Process      `json:"processes"`
	Errors    []ProcessError `json:"errors"`

	failed, counted int // processes that could not be / were counted
}

// Process is the count of one process.
type Process struct {
	PID    int    `json:"pid"`
	Comm   string `json:"comm"`
	FDs    int    `json:"fds"`
	Method Method `json:"method"`
	// Tables and Grouping are set with Config.Threads: Tables[0] is the
	// process's own table.
	Tables   []Table  `json:"tables,omitempty"`
	Grouping Grouping `json:"grouping,omitempty"`
}

// ProcessError says why a process could not be counted.
type ProcessError struct {
	PID   int    `json:"pid"`
	Error string `json:"error"`
}

// CountError is returned by Run when some processes could not be counted;
// the reasons went to Config.Stderr.
type CountError struct {
	Failed, Total int
}

func (e *CountError) Error() string {
	return fmt.Sprintf("%d of %d processes could not be counted", e.Failed, e.Total)
}

// Run counts the configured processes once, or every Watch until ctx is
// done, and writes each round. It returns a *CountError when any process
// could not be counted in any round, after writing everything else.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	fs, err := NewFSOptions(cfg.ProcRoot, Options{Workers: cfg.Workers})
	if err != nil {
		return err
	}
	defer fs.Close() // the BPF programs, if a count loaded them
	out := newWriter(cfg)
	failed, total := 0, 0
	var tick *time.Ticker
	if cfg.Watch > 0 {
		tick = time.NewTicker(cfg.Watch)
		defer tick.Stop()
	}
	for round := 1; ; round++ {
		snap, err := collect(fs, &cfg)
		if err != nil {
			return err
		}
		failed += snap.failed
		total += snap.failed + snap.counted
		if err := out.write(snap, round); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if tick == nil || (cfg.Rounds > 0 && round >= cfg.Rounds) {
			break
		}
		select {
		case <-ctx.Done():
			return result(failed, total)
		case <-tick.C:
		}
	}
	return result(failed, total)
}

func result(failed, total int) error {
	if failed > 0 {
		return &CountError{Failed: failed, Total: total}
	}
	return nil
}

// collect counts one round.
func collect(fs *FS, cfg *Config) (*Snapshot, error) {
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	snap := &Snapshot{Schema: Schema, Time: now().UTC(), ProcRoot: fs.Root(), Procfs: fs.IsProcfs(),
		Processes: []Process{}, Errors: []ProcessError{}}
	method := cmp.Or(cfg.Method, DefaultMethod)
	pids := cfg.PIDs
	if cfg.All {
		var err error
		if pids, err = fs.PIDs(); err != nil {
			return nil, fmt.Errorf("list processes: %w", err)
		}
	}
	for _, pid := range pids {
		n, used, err := fs.CountMethod(pid, method)
		if err != nil {
			if cfg.All && errors.Is(err, ErrNoProcess) {
				continue // exited since the listing
			}
			snap.Errors = append(snap.Errors, ProcessError{PID: pid, Error: err.Error()})
			snap.failed++
			continue
		}
		snap.counted++
		snap.Processes = append(snap.Processes, Process{PID: pid, FDs: n, Method: used})
	}
	if cfg.All {
		slices.SortStableFunc(snap.Processes, func(a, b Process) int {
			return cmp.Or(cmp.Compare(b.FDs, a.FDs), cmp.Compare(a.PID, b.PID))
		})
		if cfg.Top > 0 && len(snap.Processes) > cfg.Top {
			snap.Processes = snap.Processes[:cfg.Top]
		}
	}
	// Names and threads only for the processes shown: with --all --top the
	// ranking reads one file per process, not three.
	shown := snap.Processes[:0]
	for _, p := range snap.Processes {
		p.Comm = commOrUnknown(fs, p.PID, 0)
		if cfg.Threads {
			tables, g, err := fs.Tables(p.PID, method)
			if err != nil {
				snap.counted--
				if cfg.All && errors.Is(err, ErrNoProcess) {
					continue // exited since it was counted
				}
				snap.Errors = append(snap.Errors, ProcessError{PID: p.PID, Error: "threads: " + err.Error()})
				snap.failed++
				shown = append(shown, p)
				continue
			}
			for j := 1; j < len(tables); j++ {
				tables[j].Comm = commOrUnknown(fs, p.PID, tables[j].TIDs[0])
			}
			p.Tables, p.Grouping = tables, g
		}
		shown = append(shown, p)
	}
	snap.Processes = shown
	return snap, nil
}

func commOrUnknown(fs *FS, pid, tid int) string {
	c, err := fs.Comm(pid, tid)
	if err != nil || c == "" {
		return "?"
	}
	return c
}
