package compare

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/compare/shellwords"
)

// Defaults for Config's zero values.
const (
	// DefaultBuild builds otelbench. -trimpath and -buildvcs=false keep the
	// checkout path and commit id out of the binary, so two sides with the
	// same code build byte-identical binaries and compare can stop early.
	DefaultBuild = "go build -trimpath -buildvcs=false -o {out} ./cmd/otelbench"
	// DefaultServe starts the side's own otelbench server.
	DefaultServe  = "{bin} serve --addr {addr} --data {data}"
	DefaultRounds = 10
	// DefaultWarmup rounds run first and are discarded: the first round
	// of a freshly built pair pays for cold page caches and CPU frequency.
	DefaultWarmup       = 1
	DefaultReadyTimeout = 30 * time.Second
	DefaultStopGrace    = 10 * time.Second
	DefaultBuildTimeout = 10 * time.Minute
	// DefaultLoadTimeout bounds one load run (its own --duration should end
	// it long before).
	DefaultLoadTimeout = 10 * time.Minute
)

// Config configures one comparison.
type Config struct {
	// Base and Head are git refs (checked out as detached worktrees) or
	// directories (used as they are, uncommitted changes included).
	Base, Head string
	// SelfCheck runs an A/A comparison: Base is built once and serves as
	// both sides, to measure how often the current settings see a
	// difference where there is none. Head must be empty.
	SelfCheck bool
	// Repo is the git repository refs are resolved in ("" means ".").
	Repo string
	// Build is the build command, run with sh -c in the side's source
	// directory; {out} is the binary to write, {src} the source directory.
	Build string
	// Serve is the server command, split into words (no shell) so the
	// process compare samples is the server itself; {bin} is the side's
	// binary, {addr} host:port to listen on, {data} a fresh data directory,
	// {src} the source directory.
	Serve string
	// Load holds extra `otelbench load` arguments, passed through.
	Load []string
	// LoadBinary runs the load; "" means this executable. Both sides get
	// the same load.
	LoadBinary string
	// Warmup rounds run first and are discarded (0 means DefaultWarmup,
	// negative none); Rounds is the number of measured samples per side
	// (0 means DefaultRounds).
	Warmup, Rounds int
	// Gates decide the verdict; nil means DefaultGates, empty means none.
	Gates []Gate
	// Alpha is the significance level (0 means abstats.DefaultAlpha).
	Alpha float64
	// AllowBlind lists the metrics whose gates may pass although their
	// limit is below the change the rounds can detect ("all" for every
	// gate); otherwise such a gate makes the verdict inconclusive (exit 3).
	AllowBlind []string
	// Syscalls counts the server's syscalls per request with eBPF (root).
	Syscalls bool

	ReadyTimeout time.Duration // server readiness bound per round
	StopGrace    time.Duration // SIGTERM to SIGKILL
	BuildTimeout time.Duration // per side
	LoadTimeout  time.Duration // per load run

	// TempDir is where the work directory goes ("" means os.TempDir()).
	TempDir string
	// ProcRoot is the proc mount to sample ("" means /proc).
	ProcRoot string
	// Log receives one line per step (building, rounds); nil discards.
	Log io.Writer
	// Progress, if set, shows a progress bar across rounds.
	Progress io.Writer
}

// AllowBlindAll in Config.AllowBlind lets every blind gate pass.
const AllowBlindAll = "all"

// allowsBlind reports whether a blind gate on metric may pass.
func (c *Config) allowsBlind(metric string) bool {
	return slices.Contains(c.AllowBlind, AllowBlindAll) || slices.Contains(c.AllowBlind, metric)
}

// ErrUsage marks configuration errors (wrapped by Validate's errors).
var ErrUsage = errors.New("usage")

func (c *Config) withDefaults() Config {
	d := *c
	d.Repo = cmp.Or(d.Repo, ".")
	d.Build = cmp.Or(d.Build, DefaultBuild)
	d.Serve = cmp.Or(d.Serve, DefaultServe)
	d.Rounds = cmp.Or(d.Rounds, DefaultRounds)
	switch {
	case d.Warmup == 0:
		d.Warmup = DefaultWarmup
	case d.Warmup < 0:
		d.Warmup = 0
	}
	if d.Gates == nil {
		d.Gates = DefaultGates
	}
	d.ReadyTimeout = cmp.Or(d.ReadyTimeout, DefaultReadyTimeout)
	d.StopGrace = cmp.Or(d.StopGrace, DefaultStopGrace)
	d.BuildTimeout = cmp.Or(d.BuildTimeout, DefaultBuildTimeout)
	d.LoadTimeout = cmp.Or(d.LoadTimeout, DefaultLoadTimeout)
	if d.Log == nil {
		d.Log = io.Discard
	}
	return d
}

// Validate reports configuration errors; each wraps ErrUsage.
func (c *Config) Validate() error {
	d := c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...)))
	}
	switch {
	case d.Base == "":
		bad("base is empty")
	case d.SelfCheck && d.Head != "":
		bad("self-check compares one version with itself; give one ref or directory")
	case !d.SelfCheck && d.Head == "":
		bad("head is empty")
	}
	if d.Rounds < 1 {
		bad("rounds must be at least 1, got %d", d.Rounds)
	}
	if d.Alpha < 0 || d.Alpha >= 1 {
		bad("alpha must be in (0, 1), got %v", d.Alpha)
	}
	words, err := shellwords.Split(d.Serve)
	switch {
	case err != nil:
		bad("serve command: %v", err)
	case len(words) == 0:
		bad("serve command is empty")
	case !strings.Contains(d.Serve, "{addr}"):
		bad("serve command must listen on {addr}")
	}
	if !strings.Contains(d.Build, "{out}") {
		bad("build command must write {out}")
	}
	if err := checkLoadArgs(d.Load); err != nil {
		bad("%v", err)
	}
	for _, k := range d.AllowBlind {
		if k == AllowBlindAll {
			continue
		}
		if _, err := metricByKey(k); err != nil {
			bad("--allow-blind: %v", err)
		}
	}
	for _, g := range d.Gates {
		m, err := metricByKey(g.Metric)
		if err != nil {
			bad("%v", err)
		} else if m.Key == MetricSyscalls && !d.Syscalls {
			bad("gate %s needs --syscalls", g)
		}
	}
	return errors.Join(errs...)
}
