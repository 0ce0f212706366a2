package logwriter

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/logline"
	"github.com/otelbench/otelbench/internal/validtest"
)

// readAll parses every line of the current and rotated files of each stream
// and returns, per stream, how often each sequence number was seen.
func readAll(t *testing.T, res *Result, keep int) []map[int64]int {
	t.Helper()
	seen := make([]map[int64]int, len(res.Streams))
	for i, s := range res.Streams {
		seen[i] = map[int64]int{}
		paths := []string{s.Path}
		for k := 1; k <= keep; k++ {
			paths = append(paths, fmt.Sprintf("%s.%d", s.Path, k))
		}
		for _, p := range paths {
			f, err := os.Open(p)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				l, err := logline.Parse(sc.Bytes())
				if err != nil {
					t.Fatalf("%s: %q: %v", p, sc.Text(), err)
				}
				if l.Stream != s.ID {
					t.Fatalf("%s: line of stream %d, want %d", p, l.Stream, s.ID)
				}
				seen[i][l.Seq]++
			}
			f.Close()
		}
	}
	return seen
}

func TestRunWritesEveryLineOnce(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"flat json", Config{Files: 3, Rate: 3000, Duration: 500 * time.Millisecond, Format: logline.JSON}},
		{"rename rotation", Config{Files: 2, Rate: 2000, Duration: time.Second, RotateEvery: 200 * time.Millisecond,
			Keep: 9, Format: logline.Logfmt, LineBytes: Size{80, 300}}},
		{"copytruncate rotation", Config{Files: 2, Rate: 2000, Duration: time.Second, RotateEvery: 200 * time.Millisecond,
			RotateMode: RotateCopyTruncate, Keep: 9, Format: logline.Plain, Fsync: FsyncRotate}},
		{"kubernetes", Config{Files: 2, Rate: 1000, Duration: 300 * time.Millisecond, Layout: LayoutKubernetes, Fsync: FsyncWrite}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Dir = t.TempDir()
			w, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			res, err := w.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := int64(cfg.Rate * cfg.Duration.Seconds())
			if res.Lines != want {
				t.Fatalf("lines = %d, want %d", res.Lines, want)
			}
			keep := max(cfg.Keep, 0)
			seen := readAll(t, res, keep)
			var sum int64
			for i, s := range res.Streams {
				sum += s.Lines
				if int64(len(seen[i])) != s.Lines {
					t.Errorf("stream %d: %d distinct lines on disk, want %d", i, len(seen[i]), s.Lines)
				}
				for seq, n := range seen[i] {
					if n != 1 || seq >= s.Lines {
						t.Errorf("stream %d seq %d seen %d times (written %d)", i, seq, n, s.Lines)
					}
				}
				if cfg.RotateEvery > 0 && s.Rotations < 3 {
					t.Errorf("stream %d rotated %d times, want >= 3", i, s.Rotations)
				}
				if s.Link != "" {
					if target, err := os.Readlink(s.Link); err != nil || target != s.Path && filepath.Base(target) != "0.log" {
						t.Errorf("link %s -> %q, %v; want %s", s.Link, target, err, s.Path)
					}
				}
			}
			if sum != want {
				t.Errorf("stream lines sum to %d, want %d", sum, want)
			}
		})
	}
}

func TestRunCanceled(t *testing.T) {
	w, err := New(Config{Dir: t.TempDir(), Files: 1, Rate: 100, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := w.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Lines == 0 || res.Lines >= 6000 {
		t.Errorf("got interrupted=%v lines=%d, want interrupted with a few lines", res.Interrupted, res.Lines)
	}
}

func TestValidate(t *testing.T) {
	validtest.Run(t, []validtest.Case[Config]{
		{"defaults", Config{Dir: "x"}, nil},
		{"no dir", Config{}, ErrInvalidConfig},
		{"too many lines", Config{Dir: "x", Rate: 1e6, Duration: time.Hour}, ErrInvalidConfig},
		{"bad mode", Config{Dir: "x", RotateMode: "move"}, ErrInvalidConfig},
		{"bad layout", Config{Dir: "x", Layout: "docker"}, ErrInvalidConfig},
		{"bad format", Config{Dir: "x", Format: "xml"}, ErrInvalidConfig},
		{"bad fsync", Config{Dir: "x", Fsync: "always"}, ErrInvalidConfig},
	})
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want Size
		err  bool
	}{
		{"200", Size{200, 200}, false},
		{"100-400", Size{100, 400}, false},
		{"1KiB", Size{1024, 1024}, false},
		{"512B-4KiB", Size{512, 4096}, false},
		{"1MiB", Size{1 << 20, 1 << 20}, false},
		{"2MiB", Size{}, true},
		{"1-1TiB", Size{}, true},
		{"400-100", Size{}, true},
		{"0", Size{}, true},
		{"x", Size{}, true},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
