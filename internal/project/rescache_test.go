package project

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/stage"
)

// staged is everything a stage holds after staging, to compare two stages.
type staged struct {
	Resources []stage.ResourceEntry
	Scopes    []stage.ScopeEntry
	Metrics   []stage.MetricEntry
	Logs      []stage.LogRow
	Spans     []stage.SpanRow
	Events    []stage.EventRow
	Links     []stage.LinkRow
	Numbers   []stage.NumberPoint
	Hists     []stage.HistPoint
	Exps      []stage.ExpHistPoint
	Sums      []stage.SummaryPoint
}

func stagedOf(st *stage.Stage) staged {
	return staged{orNil(st.Resources), orNil(st.Scopes), orNil(st.Metrics), orNil(st.Logs), orNil(st.Spans),
		orNil(st.Events), orNil(st.Links), orNil(st.Numbers), orNil(st.Hists), orNil(st.Exps), orNil(st.Sums)}
}

// orNil makes an empty table nil: a used stage's tables are empty where a new one's are nil.
func orNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// stagedDiff names the first of a's tables that differs from b's, with both, or returns "". A
// NaN equals a NaN: a payload's NaN values stage as NaNs on both paths.
func stagedDiff(a, b staged) string {
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	opts := cmp.Options{cmp.Exporter(func(reflect.Type) bool { return true }), cmpopts.EquateNaNs()}
	for i := range av.NumField() {
		if x, y := av.Field(i).Interface(), bv.Field(i).Interface(); !cmp.Equal(x, y, opts) {
			return fmt.Sprintf("%s:\n got %+v\nwant %+v", av.Type().Field(i).Name, x, y)
		}
	}
	return ""
}

// stageOne stages payload as raw row 7 into p's stage, reset first; p's resource cache is kept.
func stageOne(p *projector, sig signal.Signal, payload []byte) (staged, error) {
	p.stage.reset(100, 200)
	r := rawlog.Row{ID: 7, Signal: sig, Records: 1, Payload: payload}
	err := p.stage.stageRow(&r)
	return stagedOf(&p.stage.Stage), err
}

// resourceCases are payloads whose resources exercise the cache: load-shaped requests of each
// signal (a few services, a dozen attributes each), and logs requests with several resource
// entries, one without attributes, one schema URL apart, and a resource field given twice.
func resourceCases(t testing.TB) map[string]struct {
	sig      signal.Signal
	payloads [][]byte
} {
	cases := map[string]struct {
		sig      signal.Signal
		payloads [][]byte
	}{}
	for _, sig := range []signal.Signal{signal.Logs, signal.Traces, signal.Metrics} {
		pool, err := otlpgen.NewPool(otlpgen.Config{Records: 3, Attrs: otlpgen.DefaultAttrs,
			BodyBytes: otlpgen.DefaultBodyBytes, PoolSize: 32, BaseTime: time.Unix(1_700_000_000, 0)}, sig)
		if err != nil {
			t.Fatal(err)
		}
		var ps [][]byte
		for _, p := range pool.Payloads(sig) {
			ps = append(ps, p.Body)
		}
		cases["load-shaped "+sig.String()] = struct {
			sig      signal.Signal
			payloads [][]byte
		}{sig, ps}
	}

	ld := plog.NewLogs()
	// The fifth resource is the first's under a schema URL: a cache hit whose cached hash,
	// taken under no schema URL, does not apply.
	for i, svc := range []string{"a", "b", "", "a", "a"} {
		rl := ld.ResourceLogs().AppendEmpty()
		if svc != "" {
			rl.Resource().Attributes().PutStr("service.name", svc)
			rl.Resource().Attributes().PutInt("pid", int64(i%2))
		}
		if i >= 3 {
			rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
		}
		rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("body")
	}
	multi, err := logsMarshaler.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	// One ResourceLogs whose Resource comes twice: protobuf merges the two, so strip leaves it.
	res := protowire.AppendTag(nil, 1, protowire.BytesType) // Resource.attributes[0]
	kv := protowire.AppendTag(nil, 1, protowire.BytesType)
	kv = protowire.AppendString(kv, "k")
	res = protowire.AppendBytes(res, kv)
	var entry []byte
	for range 2 {
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendBytes(entry, res)
	}
	twice := protowire.AppendTag(nil, 1, protowire.BytesType)
	twice = protowire.AppendBytes(twice, entry)
	cases["several resources"] = struct {
		sig      signal.Signal
		payloads [][]byte
	}{signal.Logs, [][]byte{multi, twice, multi}}
	return cases
}

// TestResourceCacheStagesAlike: a payload staged with its resources taken from the cache stages
// exactly what it stages decoded whole, and the cache is used: on the wire path and on pdata's
// (where strip cuts the cached resources out of the payload).
func TestResourceCacheStagesAlike(t *testing.T) {
	for _, pdataOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("pdata-only=%v", pdataOnly), func(t *testing.T) { testResourceCacheStagesAlike(t, pdataOnly) })
	}
}

// pathProjector returns a projector whose stage takes the wire path, its strings in an arena
// as while catching up, or only pdata's.
func pathProjector(pdataOnly bool) *projector {
	p := &projector{}
	p.stage.PdataOnly = pdataOnly
	if !pdataOnly {
		p.stage.Wire.Strs = new(stage.ByteArena)
	}
	return p
}

func testResourceCacheStagesAlike(t *testing.T, pdataOnly bool) {
	for name, tc := range resourceCases(t) {
		warm := pathProjector(pdataOnly)
		for _, p := range tc.payloads { // fill the cache
			if _, err := stageOne(warm, tc.sig, p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		hits := warm.stage.ResCache.Hits
		for i, p := range tc.payloads {
			want, err := stageOne(pathProjector(pdataOnly), tc.sig, p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := stageOne(warm, tc.sig, p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if diff := stagedDiff(got, want); diff != "" {
				t.Errorf("%s: payload %d staged from the cache differs: %s", name, i, diff)
			}
		}
		if warm.stage.ResCache.Hits == hits {
			t.Errorf("%s: no resource came from the cache", name)
		}
	}
}

// FuzzResourceCache: whatever payload a stage with a warm cache is given, it stages what a stage
// without one does, or fails as it does, on either path (the signal's high bit: pdata's only).
func FuzzResourceCache(f *testing.F) {
	for _, tc := range resourceCases(f) {
		for i, p := range tc.payloads {
			f.Add(uint8(tc.sig), p, tc.payloads[(i+1)%len(tc.payloads)])
		}
	}
	f.Fuzz(func(t *testing.T, sig uint8, first, second []byte) {
		s, pdataOnly := signal.Signal(sig%3+1), sig >= 128
		warm := pathProjector(pdataOnly)
		_, _ = stageOne(warm, s, first)
		_, _ = stageOne(warm, s, second)
		want, wantErr := stageOne(pathProjector(pdataOnly), s, second)
		got, err := stageOne(warm, s, second)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v from the warm stage, %v from a cold one", err, wantErr)
		}
		if diff := stagedDiff(got, want); err == nil && diff != "" {
			t.Fatalf("staged from the cache: %s", diff)
		}
	})
}
