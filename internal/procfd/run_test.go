//go:build linux

package procfd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/goldentest"
	"github.com/otelbench/otelbench/internal/validtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConfigValidate(t *testing.T) {
	validtest.Run(t, []validtest.Case[*Config]{
		{"pids", &Config{PIDs: []int{1}}, nil},
		{"all top", &Config{All: true, Top: 3}, nil},
		{"watch", &Config{PIDs: []int{1}, Watch: time.Second, Rounds: 2, Method: MethodStat}, nil},
		{"nothing", &Config{}, ErrInvalidConfig},
		{"both", &Config{All: true, PIDs: []int{1}}, ErrInvalidConfig},
		{"top without all", &Config{PIDs: []int{1}, Top: 1}, ErrInvalidConfig},
		{"negative top", &Config{All: true, Top: -1}, ErrInvalidConfig},
		{"negative watch", &Config{All: true, Watch: -time.Second}, ErrInvalidConfig},
		{"negative rounds", &Config{All: true, Rounds: -1}, ErrInvalidConfig},
		{"zero pid", &Config{PIDs: []int{0}}, ErrInvalidConfig},
		{"workers", &Config{All: true, Workers: 2}, nil},
		{"too many workers", &Config{All: true, Workers: MaxWorkers + 1}, ErrInvalidConfig},
		{"bad method", &Config{All: true, Method: "fast"}, ErrInvalidMethod},
	})
}

// fixtureRoot lays out a fake proc root: processes 7 (3 fds), 42 (12 fds)
// and 100 (0 fds), plus non-process entries, as plain directories.
func fixtureRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for pid, n := range map[int]int{7: 3, 42: 12, 100: 0} {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(filepath.Join(dir, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(dir, "fd", strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "comm"), []byte("proc"+strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"sys", "self", "0"} {
		if err := os.Mkdir(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var fsTypeRE = regexp.MustCompile(`filesystem type 0x[0-9a-f]+`)

var fixedNow = func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }

func TestRunGolden(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"pids.json", Config{PIDs: []int{42, 7, 100, 9}, JSON: true}, true},
		{"pids.txt", Config{PIDs: []int{42, 7, 100, 9}}, true},
		{"all-top2.txt", Config{All: true, Top: 2}, false},
		{"all.json", Config{All: true, JSON: true}, false},
		{"watch.jsonl", Config{PIDs: []int{7}, JSON: true, Watch: time.Millisecond, Rounds: 2}, false},
		{"watch.txt", Config{PIDs: []int{7}, Watch: time.Millisecond, Rounds: 2}, false},
		{"stat-forced.json", Config{PIDs: []int{7}, JSON: true, Method: MethodStat}, true},
		{"threads.txt", Config{PIDs: []int{42, 7}, Threads: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fixtureRoot(t)
			var stdout, stderr bytes.Buffer
			cfg := tt.cfg
			cfg.ProcRoot, cfg.Stdout, cfg.Stderr, cfg.Now = root, &stdout, &stderr, fixedNow
			err := Run(context.Background(), cfg)
			var ce *CountError
			if tt.wantErr != errors.As(err, &ce) {
				t.Fatalf("Run() = %v, want CountError %v", err, tt.wantErr)
			}
			got := strings.ReplaceAll(stdout.String()+"--- stderr\n"+stderr.String(), root, "ROOT")
			got = fsTypeRE.ReplaceAllString(got, "filesystem type FSTYPE") // depends on where TMPDIR lives
			goldentest.Check(t, tt.name+".golden", []byte(got))
		})
	}
}

func TestRunRealProcfs(t *testing.T) {
	pfs := newProcFS(t)
	requireStatSize(t, pfs)
	var stdout, stderr bytes.Buffer
	files := openFiles(t, 10)
	defer closeFiles(files)
	cfg := Config{PIDs: []int{os.Getpid()}, JSON: true, Threads: true, Stdout: &stdout, Stderr: &stderr}
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v (stderr %s)", err, stderr.String())
	}
	var snap Snapshot
	if err := json.Unmarshal(stdout.Bytes(), &snap); err != nil {
		t.Fatal(err)
	}
	want, _, err := pfs.CountMethod(os.Getpid(), MethodStat)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Processes) != 1 {
		t.Fatalf("processes = %+v, want 1", snap.Processes)
	}
	p := snap.Processes[0]
	if p.PID != os.Getpid() || p.FDs != want || p.Method != MethodStat || !snap.Procfs || snap.Schema != Schema {
		t.Errorf("got %+v (procfs %v), want pid %d, %d fds by stat", p, snap.Procfs, os.Getpid(), want)
	}
	if len(p.Tables) != 1 || p.Tables[0].FDs != want || p.Grouping == "" {
		t.Errorf("tables %+v grouping %q, want one table of %d fds", p.Tables, p.Grouping, want)
	}
}

func TestRunAllRealProcfs(t *testing.T) {
	newProcFS(t)
	var stdout bytes.Buffer
	if err := Run(context.Background(), Config{All: true, Top: 3, JSON: true, Stdout: &stdout}); err != nil {
		t.Fatal(err)
	}
	var snap Snapshot
	if err := json.Unmarshal(stdout.Bytes(), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Processes) != 3 {
		t.Fatalf("got %d processes, want 3 (--top 3)", len(snap.Processes))
	}
	for i := 1; i < len(snap.Processes); i++ {
		if snap.Processes[i].FDs > snap.Processes[i-1].FDs {
			t.Errorf("not ranked: %+v", snap.Processes)
		}
	}
}

func TestRunWatchStopsOnCancel(t *testing.T) {
	root := fixtureRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout lineCounter
	stdout.after, stdout.cancel = 3, cancel
	cfg := Config{ProcRoot: root, PIDs: []int{42}, JSON: true, Watch: time.Millisecond, Stdout: &stdout}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v, want nil after cancel", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not stop after its context was cancelled")
	}
	if stdout.lines < 3 {
		t.Errorf("wrote %d rounds, want at least 3", stdout.lines)
	}
}

// lineCounter counts written lines and cancels after `after` of them.
type lineCounter struct {
	lines, after int
	cancel       func()
}

func (w *lineCounter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte("\n"))
	if w.lines >= w.after {
		w.cancel()
	}
	return len(p), nil
}
