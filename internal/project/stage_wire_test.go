package project

import (
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
)

// wireCase is a payload of sig for the two staging paths.
type wireCase struct {
	sig     signal.Signal
	payload []byte
}

// fillValues puts one attribute of every AnyValue kind into m, nested ones included.
func fillValues(m pcommon.Map) {
	m.PutStr("str", "a \"quoted\"\n\xff value")
	m.PutInt("int", -42)
	m.PutDouble("double", 2.5)
	m.PutDouble("nan", math.NaN())
	m.PutDouble("inf", math.Inf(-1))
	m.PutBool("bool", true)
	m.PutEmptyBytes("bytes").FromRaw([]byte{0, 1, 2, 0xff})
	m.PutEmptyBytes("nobytes")
	m.PutEmpty("empty")
	sl := m.PutEmptySlice("slice")
	sl.AppendEmpty().SetStr("x")
	sl.AppendEmpty().SetInt(1)
	sl.AppendEmpty()
	inner := sl.AppendEmpty().SetEmptyMap()
	inner.PutStr("k", "v")
	inner.PutEmptySlice("deeper").AppendEmpty().SetEmptyMap().PutBool("b", false)
	m.PutEmptyMap("map").PutStr("z", "last")
	m.PutEmptyMap("nomap")
	m.PutEmptySlice("noslice")
}

// unsortedResource gives r attributes out of key order, a key twice and a service.name.
func unsortedResource(r pcommon.Resource, svc string) {
	a := r.Attributes()
	a.PutStr("zone", "b")
	a.PutStr("service.name", svc)
	a.PutInt("pid", 7)
	// Put replaces; a second entry of one key only comes from the wire.
	kv := a.PutEmptyMap("attrs")
	fillValues(kv)
}

func richLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	unsortedResource(rl.Resource(), "checkout")
	rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("lib")
	sl.Scope().SetVersion("1.2.3")
	sl.Scope().Attributes().PutStr("b", "2")
	sl.Scope().Attributes().PutStr("a", "1")
	sl.Scope().SetDroppedAttributesCount(3)
	sl.SetSchemaUrl("scope-schema")
	bodies := []func(pcommon.Value){
		func(v pcommon.Value) { v.SetStr("plain body") },
		func(v pcommon.Value) {},
		func(v pcommon.Value) { v.SetInt(5) },
		func(v pcommon.Value) { v.SetDouble(-0.125) },
		func(v pcommon.Value) { v.SetBool(false) },
		func(v pcommon.Value) { v.SetEmptyBytes().FromRaw([]byte("raw")) },
		func(v pcommon.Value) { fillValues(v.SetEmptyMap()) },
		func(v pcommon.Value) { v.SetEmptySlice().AppendEmpty().SetStr("one") },
		func(v pcommon.Value) { v.SetStr("") },
	}
	for i, body := range bodies {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + i))
		lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_000_000_000_500 + i))
		lr.SetSeverityNumber(plog.SeverityNumber(i * 3))
		lr.SetSeverityText("LEVEL")
		lr.SetEventName("evt")
		lr.SetFlags(plog.LogRecordFlags(i))
		lr.SetDroppedAttributesCount(uint32(i))
		if i%2 == 0 {
			lr.SetTraceID(pcommon.TraceID{1, 2, 3, byte(i)})
			lr.SetSpanID(pcommon.SpanID{9, byte(i)})
		}
		if i == 6 {
			fillValues(lr.Attributes())
		} else if i > 0 {
			lr.Attributes().PutStr("n", "v")
		}
		body(lr.Body())
	}
	// A second scope without a name, and a resource without attributes.
	sl2 := rl.ScopeLogs().AppendEmpty()
	sl2.LogRecords().AppendEmpty().Body().SetStr("no scope")
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("no resource")
	return ld
}

func richTraces() ptrace.Traces {
	td := makeTraces()
	rs := td.ResourceSpans().AppendEmpty()
	unsortedResource(rs.Resource(), "cart")
	ss := rs.ScopeSpans().AppendEmpty()
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{7})
	sp.SetSpanID(pcommon.SpanID{8})
	sp.SetName("work")
	sp.SetFlags(0x301)
	sp.SetDroppedAttributesCount(1)
	sp.SetDroppedEventsCount(2)
	sp.SetDroppedLinksCount(3)
	sp.Status().SetCode(ptrace.StatusCodeOk)
	fillValues(sp.Attributes())
	ev := sp.Events().AppendEmpty()
	ev.SetDroppedAttributesCount(4)
	fillValues(ev.Attributes())
	sp.Events().AppendEmpty().SetName("second")
	ln := sp.Links().AppendEmpty() // zero ids: kept as zeros
	ln.SetFlags(1)
	ln.SetDroppedAttributesCount(2)
	ln.TraceState().FromRaw("a=b")
	ss.Spans().AppendEmpty().SetName("no ids")
	return td
}

func richMetrics() pmetric.Metrics {
	md := makeMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	unsortedResource(rm.Resource(), "db")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("meter2")
	g := sm.Metrics().AppendEmpty()
	g.SetName("gauge")
	g.Metadata().PutStr("meta", "data")
	gd := g.SetEmptyGauge().DataPoints()
	p := gd.AppendEmpty() // no value
	p.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
	fillValues(p.Attributes())
	p = gd.AppendEmpty()
	p.SetIntValue(3)
	ex := p.Exemplars().AppendEmpty()
	ex.SetDoubleValue(1.5)
	ex.SetTraceID(pcommon.TraceID{1})
	ex.SetSpanID(pcommon.SpanID{2})
	ex.FilteredAttributes().PutStr("f", "a")
	sm.Metrics().AppendEmpty().SetName("no data")
	h := sm.Metrics().AppendEmpty()
	h.SetName("hist")
	hp := h.SetEmptyHistogram().DataPoints().AppendEmpty()
	hp.SetMax(9)
	hp.ExplicitBounds().FromRaw([]float64{math.Inf(1)})
	hp.Exemplars().AppendEmpty().SetIntValue(4)
	h.SetEmptyHistogram().DataPoints().AppendEmpty() // an empty point
	e := sm.Metrics().AppendEmpty()
	e.SetName("exp")
	ep := e.SetEmptyExponentialHistogram().DataPoints().AppendEmpty()
	ep.SetScale(-3)
	ep.SetSum(1)
	ep.SetMin(-1)
	ep.Negative().SetOffset(-7)
	ep.Negative().BucketCounts().FromRaw([]uint64{1 << 40, 0, 3})
	s := sm.Metrics().AppendEmpty()
	s.SetName("sum")
	s.SetEmptySum().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	s.Sum().DataPoints().AppendEmpty().SetDoubleValue(math.NaN())
	sm.Metrics().AppendEmpty().SetEmptySummary().DataPoints().AppendEmpty()
	return md
}

// field appends a length-delimited field num holding v to b.
func field(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// wireRequest wraps records (fields 2 of a scope entry) in one scope entry, one resource entry
// and an export request.
func wireRequest(records ...[]byte) []byte {
	var scope []byte
	for _, r := range records {
		scope = field(scope, 2, r)
	}
	return field(nil, 1, field(nil, 2, scope))
}

// quirkCases are payloads only the wire format can say, which pdata still decodes: fields out
// of order and given twice, unknown fields, values replaced, counts packed and not.
func quirkCases() map[string]wireCase {
	str := func(s string) []byte { return field(nil, 1, []byte(s)) } // AnyValue string
	kv := func(k string, v []byte) []byte { return field(field(nil, 1, []byte(k)), 2, v) }
	// unknown appends unknown fields: an empty group (pdata reads a group only when a field
	// follows it in the message), then a varint.
	unknown := func(b []byte) []byte {
		b = protowire.AppendTag(b, 98, protowire.StartGroupType)
		b = protowire.AppendTag(b, 98, protowire.EndGroupType)
		b = protowire.AppendTag(b, 99, protowire.VarintType)
		return protowire.AppendVarint(b, 1)
	}

	var log []byte
	log = field(log, 6, kv("late", str("key after value")))
	log = field(log, 6, field(field(nil, 2, str("v")), 1, []byte("k"))) // value before key
	log = field(log, 3, []byte("first"))
	log = field(log, 3, []byte("second")) // the last wins
	log = unknown(log)
	// A body whose value is given twice: the last wins.
	body := protowire.AppendTag(str("dropped"), 3, protowire.VarintType)
	body = protowire.AppendVarint(body, 77)
	log = field(log, 5, body)
	log = field(log, 9, nil) // an empty trace id
	log = protowire.AppendTag(log, 2, protowire.VarintType)
	log = protowire.AppendVarint(log, 1<<40|5) // severity truncated to int32

	// A resource of duplicate keys out of order: each rendered with the first one's value.
	var res []byte
	res = field(res, 1, kv("b", str("1")))
	res = field(res, 1, kv("a", str("2")))
	res = field(res, 1, kv("b", str("3")))
	res = field(res, 1, kv("service.name", str("svc")))
	res = field(res, 1, kv("service.name", str("other")))
	res = unknown(res)
	var entry []byte
	entry = field(entry, 2, field(field(nil, 1, field(nil, 1, []byte("scope"))), 2, field(nil, 5, str(""))))
	entry = field(entry, 3, []byte("schema before resource"))
	entry = field(entry, 1, res)
	entry = unknown(entry)
	dupKeys := field(nil, 1, entry)

	// A histogram point: single counts, then a packed run (which replaces them), then one more.
	var hp []byte
	for _, c := range []uint64{9, 9} {
		hp = protowire.AppendTag(hp, 6, protowire.Fixed64Type)
		hp = protowire.AppendFixed64(hp, c)
	}
	var packed []byte
	for _, c := range []uint64{1, 2} {
		packed = protowire.AppendFixed64(packed, c)
	}
	hp = field(hp, 6, packed)
	hp = protowire.AppendTag(hp, 6, protowire.Fixed64Type)
	hp = protowire.AppendFixed64(hp, 3)
	hp = unknown(hp)
	var hist []byte
	hist = field(hist, 1, hp)
	hist = protowire.AppendTag(hist, 2, protowire.VarintType) // temporality after the points
	hist = protowire.AppendVarint(hist, 2)
	metric := field(field(nil, 9, hist), 1, []byte("name after data"))

	// Exponential buckets: varint counts packed and not.
	var buckets []byte
	buckets = protowire.AppendTag(buckets, 2, protowire.VarintType)
	buckets = protowire.AppendVarint(buckets, 4)
	buckets = field(buckets, 2, protowire.AppendVarint(protowire.AppendVarint(nil, 5), 300))
	buckets = protowire.AppendTag(buckets, 1, protowire.VarintType)
	buckets = protowire.AppendVarint(buckets, protowire.EncodeZigZag(-9))
	exp := field(nil, 1, field(nil, 8, buckets))
	expMetric := field(field(nil, 1, []byte("e")), 10, exp)

	// A span whose status comes before its attributes, with unknown fields in each.
	var span []byte
	span = field(span, 15, unknown(field(nil, 2, []byte("msg"))))
	span = field(span, 9, kv("k", str("v")))
	span = field(span, 1, make([]byte, 16))
	span = unknown(span)

	return map[string]wireCase{
		"log fields":            {signal.Logs, wireRequest(log)},
		"duplicate keys":        {signal.Logs, dupKeys},
		"histogram counts":      {signal.Metrics, wireRequest(metric)},
		"exponential buckets":   {signal.Metrics, wireRequest(expMetric)},
		"span status and attrs": {signal.Traces, wireRequest(span)},
		"empty request":         {signal.Logs, nil},
		"empty entries":         {signal.Metrics, field(nil, 1, nil)},
	}
}

// wireCases are the payloads both paths must stage alike, with no refusal.
func wireCases(t testing.TB) map[string]wireCase {
	cases := quirkCases()
	add := func(name string, sig signal.Signal, b []byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = wireCase{sig, b}
	}
	b, err := logsMarshaler.MarshalLogs(richLogs())
	add("rich logs", signal.Logs, b, err)
	b, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(richTraces())
	add("rich traces", signal.Traces, b, err)
	b, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(richMetrics())
	add("rich metrics", signal.Metrics, b, err)
	add("bench logs", signal.Logs, benchLogs(10), nil)
	add("bench traces", signal.Traces, benchTraces(10), nil)
	add("bench metrics", signal.Metrics, benchMetrics(10), nil)
	for name, tc := range resourceCases(t) {
		for i, p := range tc.payloads {
			if name == "several resources" && i == 1 {
				continue // its Resource given twice is refused (refusedCases)
			}
			cases[name+" "+string(rune('0'+i%10))] = wireCase{tc.sig, p}
		}
	}
	return cases
}

// TestWireStageMatchesPdata: the wire path stages what pdata's does, and takes every payload
// (a refusal would hide behind the fallback).
func TestWireStageMatchesPdata(t *testing.T) {
	for name, tc := range wireCases(t) {
		want, err := stageOne(pathProjector(true), tc.sig, tc.payload)
		if err != nil {
			t.Fatalf("%s: pdata: %v", name, err)
		}
		p := pathProjector(false)
		got, err := stageOne(p, tc.sig, tc.payload)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.stage.WireRefused != 0 {
			t.Errorf("%s: the wire path refused it", name)
		}
		if diff := stagedDiff(got, want); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

// refusedCases are payloads pdata decodes by merging or migrating, which the wire path leaves
// to it, and a row of no signal, which pdata's path reports.
func refusedCases() map[string]wireCase {
	str := func(s string) []byte { return field(nil, 1, []byte(s)) }
	kv := func(k string, v []byte) []byte { return field(field(nil, 1, []byte(k)), 2, v) }
	intValue := protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 5)
	strindex := protowire.AppendVarint(protowire.AppendTag(nil, 8, protowire.VarintType), 1)
	keyStrindex := protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 1)
	scoped := func(records []byte) []byte { return field(nil, 2, records) } // a scope entry
	return map[string]wireCase{
		"no signal":      {0, field(nil, 1, field(nil, 2, nil))},
		"resource twice": {signal.Logs, field(nil, 1, field(field(nil, 1, nil), 1, nil))},
		"deprecated scope list": {signal.Logs, field(nil, 1, field(nil, 1000, field(nil, 2,
			field(nil, 5, str("old")))))},
		"body twice":             {signal.Logs, wireRequest(field(field(nil, 5, str("a")), 5, str("b")))},
		"value twice":            {signal.Logs, wireRequest(field(nil, 6, field(kv("k", str("a")), 2, str("b"))))},
		"string-table value":     {signal.Logs, wireRequest(field(nil, 5, strindex))},
		"string-table key":       {signal.Logs, wireRequest(field(nil, 6, keyStrindex))},
		"non-string service":     {signal.Logs, field(nil, 1, field(field(nil, 1, field(nil, 1, kv("service.name", intValue))), 2, scoped(nil)))},
		"scope twice":            {signal.Logs, field(nil, 1, field(nil, 2, field(field(nil, 1, nil), 1, nil)))},
		"status twice":           {signal.Traces, wireRequest(field(field(nil, 15, nil), 15, nil))},
		"two data fields":        {signal.Metrics, wireRequest(field(field(nil, 5, nil), 7, nil))},
		"positive buckets twice": {signal.Metrics, wireRequest(field(nil, 10, field(nil, 1, field(field(nil, 8, nil), 8, nil))))},
	}
}

// TestWireStageRefuses: a payload whose rows depend on pdata's merging goes to pdata, which
// stages it whole; what the wire path staged before refusing is gone, what the slice held before
// stays.
func TestWireStageRefuses(t *testing.T) {
	for name, tc := range refusedCases() {
		// The same slice on each path: a payload staged first, then the refused one.
		stageTwo := func(p *projector) (staged, error) {
			if _, err := stageOne(p, signal.Logs, benchLogs(3)); err != nil {
				t.Fatal(err)
			}
			r := rawlog.Row{ID: 8, Signal: tc.sig, Records: 1, Payload: tc.payload}
			err := p.stage.stageRow(&r)
			return stagedOf(&p.stage.Stage), err
		}
		want, wantErr := stageTwo(pathProjector(true))
		p := pathProjector(false)
		got, err := stageTwo(p)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s: error %v, pdata's %v", name, err, wantErr)
		}
		if p.stage.WireRefused != 1 {
			t.Errorf("%s: refused %d payloads, want 1", name, p.stage.WireRefused)
		}
		if diff := stagedDiff(got, want); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

// FuzzWireStageMatchesPdata: whatever the payload, staging it (the wire path, pdata where it
// refuses) stages what pdata alone stages, or fails as pdata does.
func FuzzWireStageMatchesPdata(f *testing.F) {
	for _, tc := range wireCases(f) {
		f.Add(uint8(tc.sig), tc.payload)
	}
	for _, tc := range refusedCases() {
		f.Add(uint8(tc.sig), tc.payload)
	}
	f.Fuzz(func(t *testing.T, sig uint8, payload []byte) {
		s := signal.Signal(sig % 4) // 0: no signal, a damaged row
		want, wantErr := stageOne(pathProjector(true), s, payload)
		got, err := stageOne(pathProjector(false), s, payload)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, pdata's %v", err, wantErr)
		}
		if diff := stagedDiff(got, want); err == nil && diff != "" {
			t.Fatal(diff)
		}
	})
}
