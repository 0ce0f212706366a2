package rawlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/validtest"
)

func TestAppendStores(t *testing.T) {
	l := openLog(t, Config{})
	ctx := context.Background()
	want := map[int64][]byte{}
	for i := range 10 {
		p := []byte(fmt.Sprintf("payload-%d", i))
		if err := l.Append(ctx, signal.All()[i%3], p, i+1); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		want[int64(i+1)] = p
	}
	n := 0
	err := l.Scan(func(r Row) error {
		if !bytes.Equal(r.Payload, want[r.ID]) {
			t.Errorf("row %d payload: got %q, want %q", r.ID, r.Payload, want[r.ID])
		}
		if r.Signal != signal.All()[(r.ID-1)%3] || r.Records != r.ID {
			t.Errorf("row %d: got signal %d records %d, want %d %d", r.ID, r.Signal, r.Records, signal.All()[(r.ID-1)%3], r.ID)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Fatalf("got %d rows, want 10", n)
	}
	st := l.Stats()
	if got := st.Stored[signal.Logs]; got.Requests != 4 || got.Records != 1+4+7+10 || got.Bytes != 4*9 {
		t.Errorf("Stats logs: got %+v, want 4 requests, 22 records, 36 bytes", got)
	}
	if st.LastID != 10 || st.Total != st.Stored {
		t.Errorf("Stats: last id %d, totals %+v; want 10 and the counts since Open", st.LastID, st.Total)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []validtest.Case[Config]{
		{"minimal", Config{Dir: "x"}, nil},
		{"no dir", Config{}, validtest.Invalid},
		{"negative queue", Config{Dir: "x", QueueBytes: -1}, validtest.Invalid},
		{"negative retention", Config{Dir: "x", Retention: -1}, validtest.Invalid},
	}
	validtest.Run(t, cases)
	for _, c := range cases {
		if c.Want == nil {
			continue
		}
		if _, err := Open(c.Cfg); err == nil {
			t.Errorf("%s: Open returned nil error for an invalid config", c.Name)
		}
	}
}

func TestAppendInvalid(t *testing.T) {
	l := openLog(t, Config{})
	if err := l.Append(context.Background(), 0, []byte("x"), 1); err == nil {
		t.Error("Append with signal 0: got nil error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Append(ctx, signal.Logs, []byte("x"), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with cancelled ctx: got %v, want context.Canceled", err)
	}
}

// TestGroupCommitBatches holds the writer while many callers append, so they all queue;
// releasing it must write them in at most two groups (the request the writer took first, then
// everything else).
func TestGroupCommitBatches(t *testing.T) {
	l := openLog(t, Config{})
	release := l.HoldWriter()
	defer release()
	const n = 50
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs <- l.Append(context.Background(), signal.Logs, []byte(fmt.Sprint(i)), 1) })
	}
	polltest.Until(t, "all appends queued", func() bool { return l.Stats().QueueRequests == n })
	before := l.Stats().Commits
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	st := l.Stats()
	if commits := st.Commits - before; commits > 2 {
		t.Errorf("groups for %d queued appends: got %d, want <= 2", n, commits)
	}
	if st.Stored[signal.Logs].Requests != n || rowCount(t, l) != n {
		t.Errorf("stored: got %d requests, %d rows; want %d", st.Stored[signal.Logs].Requests, rowCount(t, l), n)
	}
}

// TestQueueFull fills a one-request queue while the writer is held: the next Append must fail
// at once with ErrQueueFull, and the first must succeed.
func TestQueueFull(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		size int
	}{
		{"requests", Config{QueueRequests: 1}, 10},
		{"bytes", Config{QueueBytes: 100}, 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openLog(t, tt.cfg)
			release := l.HoldWriter()
			defer release()
			first := make(chan error, 1)
			go func() { first <- l.Append(context.Background(), signal.Logs, make([]byte, tt.size), 1) }()
			polltest.Until(t, "first append queued", func() bool { return l.Stats().QueueRequests == 1 })
			if err := l.Append(context.Background(), signal.Logs, make([]byte, tt.size), 1); !errors.Is(err, ErrQueueFull) {
				t.Errorf("second Append: got %v, want ErrQueueFull", err)
			}
			release()
			if err := <-first; err != nil {
				t.Errorf("first Append: %v", err)
			}
			if st := l.Stats(); st.QueueFull != 1 || st.QueueRequests != 0 || st.QueueBytes != 0 {
				t.Errorf("Stats: got QueueFull %d, queue %d/%d; want 1, 0/0", st.QueueFull, st.QueueRequests, st.QueueBytes)
			}
		})
	}
}

// TestAppendCancelWhileQueued cancels an append still waiting in the queue: it returns the
// context error and is not stored.
func TestAppendCancelWhileQueued(t *testing.T) {
	l := openLog(t, Config{})
	release := l.HoldWriter()
	defer release()
	first := make(chan error, 1)
	go func() { first <- l.Append(context.Background(), signal.Logs, []byte("first"), 1) }()
	polltest.Until(t, "first queued", func() bool { return l.Stats().QueueRequests == 1 })
	// The writer takes "first" and is held; "second" stays queued behind it.
	polltest.Until(t, "writer busy", l.q.idle)
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() { second <- l.Append(ctx, signal.Logs, []byte("second"), 1) }()
	polltest.Until(t, "second queued", func() bool { return l.Stats().QueueRequests == 2 })
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Append: got %v, want context.Canceled", err)
	}
	release()
	if err := <-first; err != nil {
		t.Fatalf("first Append: %v", err)
	}
	polltest.Until(t, "queue empty", func() bool { return l.Stats().QueueRequests == 0 })
	if got := rowCount(t, l); got != 1 {
		t.Errorf("rows: got %d, want 1", got)
	}
}

// TestDrainAnswersQueued drains the log while appends are queued behind the held writer: each
// is answered nil and stored, and appends from then on get ErrClosed. A Drain whose context
// ends first fails what is still queued with ErrClosed and returns the context's error.
func TestDrainAnswersQueued(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled=%v", cancelled), func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, Config{Dir: dir})
			release := l.HoldWriter()
			const n = 20
			errs := make(chan error, n)
			for i := range n {
				go func() { errs <- l.Append(context.Background(), signal.Traces, []byte(fmt.Sprint(i)), 1) }()
			}
			polltest.Until(t, "appends queued", func() bool { return l.Stats().QueueRequests == n })
			ctx, cancel := context.WithCancel(context.Background())
			if cancelled {
				cancel()
			}
			drained := make(chan error, 1)
			go func() { drained <- l.Drain(ctx) }()
			polltest.Until(t, "drain started", func() bool {
				l.q.mu.Lock()
				defer l.q.mu.Unlock()
				return l.q.closed
			})
			if err := l.Append(context.Background(), signal.Traces, []byte("late"), 1); !errors.Is(err, ErrClosed) {
				t.Errorf("Append during Drain: got %v, want ErrClosed", err)
			}
			release()
			var stored, refused int
			for range n {
				switch err := <-errs; {
				case err == nil:
					stored++
				case errors.Is(err, ErrClosed) && cancelled:
					refused++
				default:
					t.Errorf("queued Append: %v", err)
				}
			}
			if err := <-drained; (err != nil) != cancelled {
				t.Fatalf("Drain: got %v, want an error %v", err, cancelled)
			}
			cancel()
			if want := n; !cancelled && stored != want {
				t.Errorf("stored %d, want %d", stored, want)
			}
			if got := rowCount(t, l); got != stored {
				t.Errorf("rows %d, want the %d answered nil", got, stored)
			}
		})
	}
}

// boundState is a Bound whose answers a test sets.
type boundState struct {
	mu       sync.Mutex
	over     bool
	pruneNow bool
	wrote    int64
}

func (b *boundState) Over() bool     { b.mu.Lock(); defer b.mu.Unlock(); return b.over }
func (b *boundState) PruneNow() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.pruneNow }
func (b *boundState) Wrote(n int64)  { b.mu.Lock(); b.wrote += n; b.mu.Unlock() }

// TestBound: past the bound Append refuses with ErrDiskFull and writes nothing; each group's
// bytes, payloads and record headers, are counted to the bound; OnDurable sees each group.
func TestBound(t *testing.T) {
	b := &boundState{}
	var groups []Group
	var mu sync.Mutex
	l := openLog(t, Config{Bound: b, OnDurable: func(g Group) { mu.Lock(); groups = append(groups, g); mu.Unlock() }})
	if err := l.Append(context.Background(), signal.Logs, make([]byte, 100), 3); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.over = true
	wrote := b.wrote
	b.mu.Unlock()
	if wrote != 100+32 {
		t.Errorf("bytes counted to the bound: got %d, want 132", wrote)
	}
	if err := l.Append(context.Background(), signal.Logs, make([]byte, 100), 1); !errors.Is(err, diskfull.ErrDiskFull) {
		t.Errorf("Append past the bound: got %v, want ErrDiskFull", err)
	}
	if got := rowCount(t, l); got != 1 {
		t.Errorf("rows %d, want 1", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(groups) != 1 || groups[0].LastID != 1 || groups[0].Records != 3 || groups[0].Received == 0 {
		t.Errorf("OnDurable saw %+v, want one group: last id 1, 3 records, a receive time", groups)
	}
}
