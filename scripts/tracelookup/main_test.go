package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// TestMeasure projects the load generator's traces into a real traces.db and looks their
// trace ids up both ways: every lookup finds its trace and both ways agree.
func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(context.Background(), store.Config{Dir: dir, TracesFile: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := otlpgen.NewPool(otlpgen.Config{Records: 10, PoolSize: 64}, signal.Traces)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pool.Payloads(signal.Traces) {
		if err := s.Append(context.Background(), signal.Traces, p.Body, p.Records); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if st := s.Stats(); st.ProjectedRawID == st.LastRawID {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("projection did not catch up: %+v", st)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := measure(filepath.Join(dir, store.TracesFileName), 20, 2, &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.lookups < 20 || res.found != res.lookups || res.differ != 0 || strings.Count(out.String(), "round ") != 2 {
		t.Errorf("measure: %+v, want every lookup of 2 rounds found and agreeing:\n%s", res, out.String())
	}
}
