package stage

import (
	"fmt"
	"hash/fnv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/signal"
)

// stage holds one projection slice decoded into rows, built outside the write lock. Rows refer
// to resources, scopes and metrics by index into the slice-local tables; commitStage resolves
// those to database ids.
type Stage struct {
	NextLogID, NextSpanID int64

	Resources []ResourceEntry
	resIndex  map[[16]byte]int
	Scopes    []ScopeEntry
	scopeIdx  map[[16]byte]int
	Metrics   []MetricEntry
	metricIdx map[[16]byte]int

	Logs    []LogRow
	Spans   []SpanRow
	Events  []EventRow
	Links   []LinkRow
	Numbers []NumberPoint
	Hists   []HistPoint
	Exps    []ExpHistPoint
	Sums    []SummaryPoint

	buf []byte // JSON scratch

	Payloads ByteArena  // the slice's raw payloads, while catching up (fill)
	Strs     *ByteArena // the strings of its rows, while catching up (wireStager.strs)

	// What the stager prepares beyond the rows, for the committing thread only to insert.
	chunker  chunker    // packs chunks (packChunks)
	Chunks   []chunkRow // trace_chunks rows, blobs in chunkBuf
	ChunkBuf []byte
	text     TextDocs  // builds texts (packTexts)
	Texts    []textDoc // log_text documents
	TextFrom int       // logs of a first group begun in an earlier slice, left to the committing thread

	ResCache *ResCache // the resources staged so far, by their encoded bytes (rescache.go)
	strip    resStrip

	Wire        wireStager // stages payloads from their bytes (stage_wire.go)
	PdataOnly   bool       // stage every payload with pdata (tests compare the two paths)
	WireRefused int64      // payloads the wire path left to pdata
}

type ResourceEntry struct {
	Hash      [16]byte
	Service   any // string or nil
	SchemaURL string
	Attrs     string
}

type ScopeEntry struct {
	Hash                     [16]byte
	Name, Version, SchemaURL string
	Attrs                    string
}

type MetricEntry struct {
	Hash                    [16]byte
	Res, Scope              int
	Name, Description, Unit string
	Typ                     string
	Temporality             int64
	Monotonic               bool
}

type LogRow struct {
	ID, RawID                        int64
	Res, Scope                       int
	Time, Observed                   int64
	Severity                         int64
	SeverityText, Body, Attrs, Event string
	TraceID, SpanID                  string // lowercase hex, "" for NULL (hexID)
	Flags                            int64
}

type SpanRow struct {
	ID, RawID                          int64
	Res, Scope                         int
	TraceID, SpanID, Parent            string // as logRow's
	TraceState, Name                   string
	Kind                               int64
	Start, End                         int64
	StatusCode                         int64
	StatusMsg, Attrs                   string
	Flags, DropAttrs, DropEv, DropLink int64
}

type EventRow struct {
	SpanRow     int64
	Time        int64
	Name, Attrs string
	Dropped     int64
}

type LinkRow struct {
	SpanRow           int64
	TraceID, SpanID   string // as logRow's
	TraceState, Attrs string
	Flags, Dropped    int64
}

type pointHead struct {
	Metric      int
	RawID       int64
	Time, Start int64
	Attrs       string
	Flags       int64
}

type NumberPoint struct {
	pointHead
	Vint, Vdouble any
}

type HistPoint struct {
	pointHead
	Count           int64
	Sum, Min, Max   any
	Buckets, Bounds string
}

type ExpHistPoint struct {
	pointHead
	Count                  int64
	Sum, Min, Max          any
	Scale                  int64
	ZeroCount              int64
	ZeroThreshold          float64
	PosOffset, NegOffset   int64
	PosBuckets, NegBuckets string
}

type SummaryPoint struct {
	pointHead
	Count     int64
	Sum       float64
	Quantiles string
}

func (st *Stage) Reset(nextLogID, nextSpanID int64) {
	st.NextLogID, st.NextSpanID = nextLogID, nextSpanID
	if st.ResCache == nil {
		st.ResCache = &ResCache{}
	}
	st.Resources = st.Resources[:0]
	st.Scopes = st.Scopes[:0]
	st.Metrics = st.Metrics[:0]
	if st.resIndex == nil {
		st.resIndex = map[[16]byte]int{}
		st.scopeIdx = map[[16]byte]int{}
		st.metricIdx = map[[16]byte]int{}
	}
	clear(st.resIndex)
	clear(st.scopeIdx)
	clear(st.metricIdx)
	st.Logs = st.Logs[:0]
	st.Spans = st.Spans[:0]
	st.Events = st.Events[:0]
	st.Links = st.Links[:0]
	st.Numbers = st.Numbers[:0]
	st.Hists = st.Hists[:0]
	st.Exps = st.Exps[:0]
	st.Sums = st.Sums[:0]
	st.Chunks, st.Texts, st.TextFrom = st.Chunks[:0], st.Texts[:0], 0
}

// pack prepares what the committing thread would otherwise build from the staged rows: the
// trace_chunks rows and the log_text documents.
func (st *Stage) Pack() {
	st.packChunks()
	st.packTexts()
}

// pointCounts returns the number of points staged for each of schema.PointTables.
func (st *Stage) PointCounts() [len(schema.PointTables)]int64 {
	return [...]int64{int64(len(st.Numbers)), int64(len(st.Hists)), int64(len(st.Exps)), int64(len(st.Sums))}
}

// records returns the number of projected rows staged (for sizing and tests).
func (st *Stage) Records() int {
	return len(st.Logs) + len(st.Spans) + len(st.Numbers) + len(st.Hists) + len(st.Exps) + len(st.Sums)
}

// json renders f's output into a string using the scratch buffer.
func (st *Stage) json(f func([]byte) []byte) string {
	st.buf = f(st.buf[:0])
	return string(st.buf)
}

func (st *Stage) attrs(m pcommon.Map) string {
	if m.Len() == 0 {
		return "{}"
	}
	return st.json(func(b []byte) []byte { return appendJSONMap(b, m) })
}

// resource stages a resource and returns its slice-local index.
func (st *Stage) resource(r pcommon.Resource, schemaURL string) int {
	attrs := r.Attributes()
	st.buf = appendJSONMapSorted(st.buf[:0], attrs)
	var service any
	if v, ok := attrs.Get("service.name"); ok {
		service = v.AsString()
	}
	return st.stageResourceJSON(st.buf, service, schemaURL)
}

// stageResource stages a resource given its attributes' JSON (as resource renders them) and
// its service.name, and returns its slice-local index.
// stageCached stages a resource found in the cache (resCache), under schemaURL.
func (st *Stage) stageCached(c *resCached, schemaURL string) int {
	if c.schemaURL != schemaURL {
		return st.stageResource(c.Attrs, c.Service, schemaURL)
	}
	if i, ok := st.resIndex[c.hash]; ok {
		return i
	}
	st.Resources = append(st.Resources, ResourceEntry{Hash: c.hash, SchemaURL: c.schemaURL, Attrs: c.Attrs, Service: c.Service})
	st.resIndex[c.hash] = len(st.Resources) - 1
	return len(st.Resources) - 1
}

func (st *Stage) stageResource(attrs string, service any, schemaURL string) int {
	st.buf = append(st.buf[:0], attrs...)
	return st.stageResourceJSON(st.buf, service, schemaURL)
}

func (st *Stage) stageResourceJSON(attrs []byte, service any, schemaURL string) int {
	h := fnv.New128a()
	h.Write([]byte(schemaURL))
	h.Write([]byte{0})
	h.Write(attrs)
	var key [16]byte
	h.Sum(key[:0])
	if i, ok := st.resIndex[key]; ok {
		return i
	}
	st.Resources = append(st.Resources, ResourceEntry{Hash: key, SchemaURL: schemaURL, Attrs: string(attrs), Service: service})
	st.resIndex[key] = len(st.Resources) - 1
	return len(st.Resources) - 1
}

// scope stages an instrumentation scope and returns its slice-local index.
func (st *Stage) scope(s pcommon.InstrumentationScope, schemaURL string) int {
	st.buf = appendJSONMapSorted(st.buf[:0], s.Attributes())
	return st.stageScope(s.Name(), s.Version(), schemaURL, st.buf)
}

// stageScope stages a scope given its attributes' JSON (as scope renders them) and returns its
// slice-local index. name and version may be views of a payload: they are copied when kept.
func (st *Stage) stageScope(name, version, schemaURL string, attrs []byte) int {
	h := fnv.New128a()
	for _, part := range []string{name, version, schemaURL} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(attrs)
	var key [16]byte
	h.Sum(key[:0])
	if i, ok := st.scopeIdx[key]; ok {
		return i
	}
	st.Scopes = append(st.Scopes, ScopeEntry{Hash: key, Name: strings.Clone(name), Version: strings.Clone(version),
		SchemaURL: schemaURL, Attrs: string(attrs)})
	st.scopeIdx[key] = len(st.Scopes) - 1
	return len(st.Scopes) - 1
}

// stageMark is how far a stage was filled: rollback returns it there.
type stageMark struct {
	nextLogID, nextSpanID                                                           int64
	resources, scopes, metrics, logs, spans, events, links, nums, hists, exps, sums int
}

func (st *Stage) Mark() stageMark {
	return stageMark{st.NextLogID, st.NextSpanID, len(st.Resources), len(st.Scopes), len(st.Metrics), len(st.Logs),
		len(st.Spans), len(st.Events), len(st.Links), len(st.Numbers), len(st.Hists), len(st.Exps), len(st.Sums)}
}

// rollback forgets what was staged since m, which must be a mark of the same slice.
func (st *Stage) Rollback(m stageMark) {
	for _, e := range st.Resources[m.resources:] {
		delete(st.resIndex, e.Hash)
	}
	for _, e := range st.Scopes[m.scopes:] {
		delete(st.scopeIdx, e.Hash)
	}
	for _, e := range st.Metrics[m.metrics:] {
		delete(st.metricIdx, e.Hash)
	}
	st.NextLogID, st.NextSpanID = m.nextLogID, m.nextSpanID
	st.Resources, st.Scopes, st.Metrics = st.Resources[:m.resources], st.Scopes[:m.scopes], st.Metrics[:m.metrics]
	st.Logs, st.Spans, st.Events, st.Links = st.Logs[:m.logs], st.Spans[:m.spans], st.Events[:m.events], st.Links[:m.links]
	st.Numbers, st.Hists, st.Exps, st.Sums = st.Numbers[:m.nums], st.Hists[:m.hists], st.Exps[:m.exps], st.Sums[:m.sums]
}

// stagePdata stages payload, raw row rawID's, decoded by pdata.
func (st *Stage) StagePdata(sig signal.Signal, rawID int64, payload []byte) error {
	payload = st.ResCache.strip(payload, &st.strip)
	switch sig {
	case signal.Logs:
		var u plog.ProtoUnmarshaler
		ld, err := u.UnmarshalLogs(payload)
		if err != nil {
			return fmt.Errorf("decode logs: %w", err)
		}
		st.addLogs(rawID, ld, &st.strip)
	case signal.Traces:
		var u ptrace.ProtoUnmarshaler
		td, err := u.UnmarshalTraces(payload)
		if err != nil {
			return fmt.Errorf("decode traces: %w", err)
		}
		st.addTraces(rawID, td, &st.strip)
	case signal.Metrics:
		var u pmetric.ProtoUnmarshaler
		md, err := u.UnmarshalMetrics(payload)
		if err != nil {
			return fmt.Errorf("decode metrics: %w", err)
		}
		st.addMetrics(rawID, md, &st.strip)
	default:
		return fmt.Errorf("unknown signal %d", sig)
	}
	return nil
}

// addLogs stages ld, decoded from the payload that rs describes (resCache.strip).
func (st *Stage) addLogs(rawID int64, ld plog.Logs, rs *resStrip) {
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		rl := rls.At(i)
		res := st.resourceFor(rs, i, rl.Resource(), rl.SchemaUrl())
		sls := rl.ScopeLogs()
		for j := range sls.Len() {
			sl := sls.At(j)
			scope := st.scope(sl.Scope(), sl.SchemaUrl())
			lrs := sl.LogRecords()
			for k := range lrs.Len() {
				lr := lrs.At(k)
				tid, sid := lr.TraceID(), lr.SpanID()
				row := LogRow{
					ID:           st.NextLogID,
					RawID:        rawID,
					Res:          res,
					Scope:        scope,
					Time:         int64(lr.Timestamp()),
					Observed:     int64(lr.ObservedTimestamp()),
					Severity:     int64(lr.SeverityNumber()),
					SeverityText: lr.SeverityText(),
					Attrs:        st.attrs(lr.Attributes()),
					Event:        lr.EventName(),
					TraceID:      hexID(tid[:]),
					SpanID:       hexID(sid[:]),
					Flags:        int64(lr.Flags()),
				}
				switch body := lr.Body(); body.Type() {
				case pcommon.ValueTypeStr:
					row.Body = body.Str()
				case pcommon.ValueTypeEmpty:
				default:
					row.Body = st.json(func(b []byte) []byte { return appendJSONValue(b, body) })
				}
				st.Logs = append(st.Logs, row)
				st.NextLogID++
			}
		}
	}
}

// addTraces stages td, decoded from the payload that strip describes (resCache.strip).
func (st *Stage) addTraces(rawID int64, td ptrace.Traces, strip *resStrip) {
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		res := st.resourceFor(strip, i, rs.Resource(), rs.SchemaUrl())
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j)
			scope := st.scope(ss.Scope(), ss.SchemaUrl())
			spans := ss.Spans()
			for k := range spans.Len() {
				sp := spans.At(k)
				tid, sid, pid := sp.TraceID(), sp.SpanID(), sp.ParentSpanID()
				row := SpanRow{
					ID:         st.NextSpanID,
					RawID:      rawID,
					Res:        res,
					Scope:      scope,
					Parent:     hexID(pid[:]),
					TraceState: sp.TraceState().AsRaw(),
					Name:       sp.Name(),
					Kind:       int64(sp.Kind()),
					Start:      int64(sp.StartTimestamp()),
					End:        int64(sp.EndTimestamp()),
					StatusCode: int64(sp.Status().Code()),
					StatusMsg:  sp.Status().Message(),
					Attrs:      st.attrs(sp.Attributes()),
					Flags:      int64(sp.Flags()),
					DropAttrs:  int64(sp.DroppedAttributesCount()),
					DropEv:     int64(sp.DroppedEventsCount()),
					DropLink:   int64(sp.DroppedLinksCount()),
				}
				row.TraceID, row.SpanID = requiredIDs(tid[:], sid[:])
				st.Spans = append(st.Spans, row)
				evs := sp.Events()
				for e := range evs.Len() {
					ev := evs.At(e)
					st.Events = append(st.Events, EventRow{
						SpanRow: row.ID, Time: int64(ev.Timestamp()), Name: ev.Name(),
						Attrs: st.attrs(ev.Attributes()), Dropped: int64(ev.DroppedAttributesCount()),
					})
				}
				links := sp.Links()
				for l := range links.Len() {
					ln := links.At(l)
					ltid, lsid := ln.TraceID(), ln.SpanID()
					lr := LinkRow{
						SpanRow: row.ID, TraceState: ln.TraceState().AsRaw(), Attrs: st.attrs(ln.Attributes()),
						Flags: int64(ln.Flags()), Dropped: int64(ln.DroppedAttributesCount()),
					}
					lr.TraceID, lr.SpanID = requiredIDs(ltid[:], lsid[:])
					st.Links = append(st.Links, lr)
				}
				st.NextSpanID++
			}
		}
	}
}
