package logwriter

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/bytesize"
	"github.com/otelbench/otelbench/internal/logline"
)

// Defaults of Config.
const (
	DefaultFiles     = 4
	DefaultRate      = 1000
	DefaultDuration  = 10 * time.Second
	DefaultLineBytes = 200
	DefaultInterval  = time.Millisecond
	DefaultKeep      = 3
	// MaxLines bounds one run (rate × duration): the sink keeps a bit per
	// line and stream, so 100 M lines cost it 12.5 MB.
	MaxLines = 100_000_000
	// LateThreshold is how far behind its due time a line may be written
	// before it counts as late.
	LateThreshold = 10 * time.Millisecond
)

// RotateMode is how files rotate.
type RotateMode string

// Rotation modes.
const (
	RotateRename       RotateMode = "rename"
	RotateCopyTruncate RotateMode = "copytruncate"
)

// Layout is how files are laid out under Dir.
type Layout string

// Layouts: flat is Dir/app-<i>.log; kubernetes is the kubelet's pod log tree.
const (
	LayoutFlat       Layout = "flat"
	LayoutKubernetes Layout = "kubernetes"
)

// Fsync is when the writer calls fsync(2) on its files.
type Fsync string

// Fsync policies: never; before each rotation; after every batch write.
const (
	FsyncNone   Fsync = "none"
	FsyncRotate Fsync = "rotate"
	FsyncWrite  Fsync = "write"
)

// Size is a line length distribution: uniform over [Min, Max] bytes
// (newline included); Min == Max is a fixed length.
type Size struct{ Min, Max int }

// ParseSize parses "200", "100-400" or "1KiB-4KiB": each end a byte size
// (bytesize.Parse).
func ParseSize(s string) (Size, error) {
	lo, hi, ok := strings.Cut(s, "-")
	a, err := bytesize.Parse(lo)
	if err != nil {
		return Size{}, fmt.Errorf("line bytes %q: want N or MIN-MAX, each like 200 or 1KiB", s)
	}
	b := a
	if ok {
		if b, err = bytesize.Parse(hi); err != nil {
			return Size{}, fmt.Errorf("line bytes %q: want N or MIN-MAX, each like 200 or 1KiB", s)
		}
	}
	if a < 1 || b < a || b > 1<<20 {
		return Size{}, fmt.Errorf("line bytes %q: want 1 <= MIN <= MAX <= 1048576", s)
	}
	return Size{int(a), int(b)}, nil
}

// Set parses v with ParseSize; with String and Type it makes *Size a flag
// value (pflag.Value).
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = n
	return nil
}

// Type names the value in flag usage, as bytesize's flags do.
func (s *Size) Type() string { return "size" }

func (s Size) String() string {
	if s.Min == s.Max {
		return strconv.Itoa(s.Min)
	}
	return fmt.Sprintf("%d-%d", s.Min, s.Max)
}

// Config configures a Writer. Zero values take the Default constants.
type Config struct {
	// Dir is the directory the writer owns; it is created if missing.
	Dir string
	// Files is the number of streams, one file each.
	Files int
	// Rate is the total lines per second over all files.
	Rate float64
	// Duration is how long lines are written.
	Duration time.Duration
	// LineBytes is the distribution of line lengths.
	LineBytes Size
	// Format of the lines (default logline.JSON).
	Format logline.Format
	// Interval is the batching period: the writer wakes once per Interval.
	Interval time.Duration
	// RotateEvery rotates every file this often (0: never).
	RotateEvery time.Duration
	// RotateMode is how (default rename).
	RotateMode RotateMode
	// Keep is how many rotated files are kept (NAME.1 .. NAME.Keep).
	Keep int
	// Layout of the files (default flat).
	Layout Layout
	// Fsync policy (default none).
	Fsync Fsync
	// Seed of the line length PRNG.
	Seed uint64
}

// ErrInvalidConfig is wrapped by every Validate error.
var ErrInvalidConfig = errors.New("invalid writer config")

func (c Config) withDefaults() Config {
	c.Files = cmp.Or(c.Files, DefaultFiles)
	c.Rate = cmp.Or(c.Rate, DefaultRate)
	c.Duration = cmp.Or(c.Duration, DefaultDuration)
	if c.LineBytes == (Size{}) {
		c.LineBytes = Size{DefaultLineBytes, DefaultLineBytes}
	}
	c.Format = cmp.Or(c.Format, logline.JSON)
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	c.RotateMode = cmp.Or(c.RotateMode, RotateRename)
	c.Keep = cmp.Or(c.Keep, DefaultKeep)
	c.Layout = cmp.Or(c.Layout, LayoutFlat)
	c.Fsync = cmp.Or(c.Fsync, FsyncNone)
	return c
}

// Validate reports what is wrong with c (after defaults).
func (c Config) Validate() error {
	c = c.withDefaults()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	switch {
	case c.Dir == "":
		return bad("no directory")
	case c.Files < 1 || c.Files > 10000:
		return bad("files %d: want 1..10000", c.Files)
	case c.Rate < 0 || c.Rate > 10_000_000:
		return bad("rate %v: want 0 < rate <= 10000000 lines/s", c.Rate)
	case c.Duration < 0:
		return bad("negative duration %v", c.Duration)
	case c.Rate*c.Duration.Seconds() > MaxLines:
		return bad("rate × duration = %.0f lines: at most %d per run", c.Rate*c.Duration.Seconds(), MaxLines)
	case c.Interval < 0 || c.Interval > time.Second:
		return bad("interval %v: want 0 < interval <= 1s", c.Interval)
	case c.RotateEvery < 0:
		return bad("negative rotation period %v", c.RotateEvery)
	case c.Keep < 0 || c.Keep > 1000:
		return bad("keep %d: want 1..1000", c.Keep)
	case c.LineBytes.Min < 1 || c.LineBytes.Max < c.LineBytes.Min:
		return bad("line bytes %v", c.LineBytes)
	}
	if _, err := logline.ParseFormat(string(c.Format)); err != nil {
		return bad("%v", err)
	}
	switch c.RotateMode {
	case RotateRename, RotateCopyTruncate:
	default:
		return bad("rotate mode %q: want rename or copytruncate", c.RotateMode)
	}
	switch c.Layout {
	case LayoutFlat, LayoutKubernetes:
	default:
		return bad("layout %q: want flat or kubernetes", c.Layout)
	}
	switch c.Fsync {
	case FsyncNone, FsyncRotate, FsyncWrite:
	default:
		return bad("fsync %q: want none, rotate or write", c.Fsync)
	}
	return nil
}
