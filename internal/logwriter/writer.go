package logwriter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/logline"
)

// Stream is one file's figures after a run.
type Stream struct {
	ID        int    `json:"id"`
	Path      string `json:"path"`
	Link      string `json:"link,omitempty"`
	Lines     int64  `json:"lines"` // sequence numbers 0 .. Lines-1 were written
	Bytes     int64  `json:"bytes"`
	Rotations int    `json:"rotations"`
}

// Result is what a Run wrote.
type Result struct {
	Started     time.Time     `json:"started"`
	Elapsed     time.Duration `json:"-"`
	Lines       int64         `json:"lines"`
	Bytes       int64         `json:"bytes"`
	LateLines   int64         `json:"late_lines"`  // written more than LateThreshold after their due time
	MaxLag      time.Duration `json:"-"`           // the furthest behind schedule a batch was written
	Writes      int64         `json:"writes"`      // write(2) calls
	Interrupted bool          `json:"interrupted"` // ctx ended the run early
	Streams     []Stream      `json:"streams"`
}

type stream struct {
	Stream
	f   *os.File
	buf []byte
}

// Writer writes the streams of a Config. New creates the files (so an
// agent can start following them before Run); Run writes; Close closes.
type Writer struct {
	cfg     Config
	streams []*stream
	rng     *rand.Rand
	lines   atomic.Int64 // live count, for progress
}

// New validates cfg and creates Dir and one empty file per stream.
func New(cfg Config) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w := &Writer{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
	for i := range cfg.Files {
		path, link := streamPath(cfg.Dir, cfg.Layout, i)
		f, err := create(path, link)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.streams = append(w.streams, &stream{Stream: Stream{ID: i, Path: path, Link: link}, f: f})
	}
	return w, nil
}

// Config returns the configuration with defaults applied.
func (w *Writer) Config() Config { return w.cfg }

// Paths returns the file of each stream.
func (w *Writer) Paths() []string {
	p := make([]string, len(w.streams))
	for i, s := range w.streams {
		p[i] = s.Path
	}
	return p
}

// Lines returns how many lines were written so far (safe while Run runs).
func (w *Writer) Lines() int64 { return w.lines.Load() }

// Close closes the files; it does not remove them.
func (w *Writer) Close() error {
	var errs []error
	for _, s := range w.streams {
		if s.f != nil {
			errs = append(errs, s.f.Close())
			s.f = nil
		}
	}
	return errors.Join(errs...)
}

// Run writes Rate lines per second for Duration (or until ctx ends, which
// is not an error: Result.Interrupted says so). Line n goes to stream
// n mod Files with sequence number n div Files.
func (w *Writer) Run(ctx context.Context) (*Result, error) {
	c := w.cfg
	total := int64(c.Rate * c.Duration.Seconds())
	start := time.Now()
	pacer := loadgen.NewPacer(loadgen.RealClock, start, c.Rate)
	res := &Result{Started: start}
	batch := max(int64(c.Rate*c.Interval.Seconds()), 1)
	nextRotate := start.Add(c.RotateEvery)
	var n int64
	for n < total {
		_, _, err := pacer.Wait(ctx, min(n+batch, total)-1)
		if err != nil {
			res.Interrupted = true
			break
		}
		now := time.Now()
		if c.RotateEvery > 0 && !now.Before(nextRotate) {
			if err := w.rotateAll(); err != nil {
				return w.finish(res, n, start), err
			}
			nextRotate = nextRotate.Add(c.RotateEvery)
		}
		due := min(int64(now.Sub(start).Seconds()*c.Rate)+1, total)
		if lag := now.Sub(pacer.At(n)); lag > res.MaxLag {
			res.MaxLag = lag
		}
		late := int64(0)
		for m := n; m < due && now.Sub(pacer.At(m)) > LateThreshold; m++ {
			late++
		}
		res.LateLines += late
		if err := w.writeBatch(res, n, due, now); err != nil {
			return w.finish(res, n, start), err
		}
		n = due
		w.lines.Store(n)
	}
	return w.finish(res, n, start), nil
}

// writeBatch appends lines [from, to) to their streams' buffers, all
// stamped now, and writes each buffer with one write(2).
func (w *Writer) writeBatch(res *Result, from, to int64, now time.Time) error {
	c := w.cfg
	files := int64(len(w.streams))
	ns := now.UnixNano()
	for m := from; m < to; m++ {
		s := w.streams[m%files]
		if c.Layout == LayoutKubernetes {
			s.buf = logline.AppendCRI(s.buf, now)
		}
		size := c.LineBytes.Min
		if c.LineBytes.Max > c.LineBytes.Min {
			size += w.rng.IntN(c.LineBytes.Max - c.LineBytes.Min + 1)
		}
		s.buf = logline.Append(s.buf, c.Format, logline.Line{Stream: s.ID, Seq: m / files, TimeNs: ns}, size)
		s.Lines++
	}
	for _, s := range w.streams {
		if len(s.buf) == 0 {
			continue
		}
		if _, err := s.f.Write(s.buf); err != nil {
			return fmt.Errorf("write %s: %w", s.Path, err)
		}
		res.Writes++
		s.Bytes += int64(len(s.buf))
		if c.Fsync == FsyncWrite {
			if err := s.f.Sync(); err != nil {
				return fmt.Errorf("fsync %s: %w", s.Path, err)
			}
		}
		s.buf = s.buf[:0]
	}
	return nil
}

func (w *Writer) rotateAll() error {
	c := w.cfg
	for _, s := range w.streams {
		f, err := rotate(s.f, s.Path, c.RotateMode, c.Keep, c.Fsync != FsyncNone)
		s.f = f
		if err != nil {
			return fmt.Errorf("stream %d: %w", s.ID, err)
		}
		s.Rotations++
	}
	return nil
}

func (w *Writer) finish(res *Result, n int64, start time.Time) *Result {
	res.Elapsed = time.Since(start)
	res.Lines = n
	w.lines.Store(n)
	for _, s := range w.streams {
		res.Bytes += s.Bytes
		res.Streams = append(res.Streams, s.Stream)
	}
	return res
}
