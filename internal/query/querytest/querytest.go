// Package querytest loads a real store with pdata-built telemetry for the
// query and dashboard tests: a store.Store in t.TempDir(), records appended
// through store.Append, and a wait for projection; and it serves the query
// API over that store on loopback (Serve).
package querytest

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// OpenStore opens a store in a temp dir; it is closed when the test ends
// (after cleanups registered later, which run first).
func OpenStore(t testing.TB) *store.Store {
	t.Helper()
	return OpenStoreConfig(t, store.Config{})
}

// OpenStoreConfig is OpenStore with cfg's layout (TracesFile); Dir, Sync and Logger are set
// here.
func OpenStoreConfig(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	cfg.Dir, cfg.Sync, cfg.Logger = t.TempDir(), store.SyncOff, slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(context.Background()); err != nil {
			t.Errorf("store.Close: %v", err)
		}
	})
	return st
}

// LogSpec describes one log record.
type LogSpec struct {
	Service string
	Sev     plog.SeverityNumber
	Body    string
	TraceID string // hex or ""
	At      time.Time
	// Resource and Attrs are extra resource and record attributes (the
	// record always has k=v).
	Resource, Attrs map[string]any
}

// putAll puts attrs into m: strings, ints, bools and floats by type.
func putAll(m pcommon.Map, attrs map[string]any) {
	for k, v := range attrs {
		switch v := v.(type) {
		case string:
			m.PutStr(k, v)
		case int:
			m.PutInt(k, int64(v))
		case bool:
			m.PutBool(k, v)
		case float64:
			m.PutDouble(k, v)
		}
	}
}

// AppendLogs appends one logs request holding logs.
func AppendLogs(t testing.TB, st *store.Store, logs ...LogSpec) {
	t.Helper()
	ld := plog.NewLogs()
	for _, l := range logs {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", l.Service)
		putAll(rl.Resource().Attributes(), l.Resource)
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(l.At))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(l.At))
		lr.SetSeverityNumber(l.Sev)
		lr.Body().SetStr(l.Body)
		lr.Attributes().PutStr("k", "v")
		putAll(lr.Attributes(), l.Attrs)
		if l.TraceID != "" {
			var tid pcommon.TraceID
			b, _ := hex.DecodeString(l.TraceID)
			copy(tid[:], b)
			lr.SetTraceID(tid)
		}
	}
	var m plog.ProtoMarshaler
	b, err := m.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(context.Background(), signal.Logs, b, len(logs)); err != nil {
		t.Fatalf("Append logs: %v", err)
	}
}

// SpanSpec is one span; ids are hex.
type SpanSpec struct {
	Service, TraceID, SpanID, ParentID, Name string
	Start, End                               time.Time
	Err                                      bool
	Resource, Attrs                          map[string]any
}

// AppendSpans appends one traces request holding spans.
func AppendSpans(t testing.TB, st *store.Store, spans ...SpanSpec) {
	t.Helper()
	td := ptrace.NewTraces()
	for _, s := range spans {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", s.Service)
		putAll(rs.Resource().Attributes(), s.Resource)
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		putAll(sp.Attributes(), s.Attrs)
		var tid pcommon.TraceID
		var sid, pid pcommon.SpanID
		b, _ := hex.DecodeString(s.TraceID)
		copy(tid[:], b)
		b, _ = hex.DecodeString(s.SpanID)
		copy(sid[:], b)
		sp.SetTraceID(tid)
		sp.SetSpanID(sid)
		if s.ParentID != "" {
			b, _ = hex.DecodeString(s.ParentID)
			copy(pid[:], b)
			sp.SetParentSpanID(pid)
		}
		sp.SetName(s.Name)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.Start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.End))
		if s.Err {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	}
	var m ptrace.ProtoMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(context.Background(), signal.Traces, b, len(spans)); err != nil {
		t.Fatalf("Append spans: %v", err)
	}
}

// AppendMetrics appends one metrics request.
func AppendMetrics(t testing.TB, st *store.Store, md pmetric.Metrics) {
	t.Helper()
	var m pmetric.ProtoMarshaler
	b, err := m.MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(context.Background(), signal.Metrics, b, md.DataPointCount()); err != nil {
		t.Fatalf("Append metrics: %v", err)
	}
}

// WaitProjected waits until everything appended so far is projected.
func WaitProjected(t testing.TB, st *store.Store) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := st.Stats()
		if s.ProjectedRawID >= s.LastRawID && s.LagRecords == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("projection did not catch up: %+v", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
