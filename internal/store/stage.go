package store

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
type stage struct {
	nextLogID, nextSpanID int64

	resources []resourceEntry
	resIndex  map[[16]byte]int
	scopes    []scopeEntry
	scopeIdx  map[[16]byte]int
	metrics   []metricEntry
	metricIdx map[[16]byte]int

	logs    []logRow
	spans   []spanRow
	events  []eventRow
	links   []linkRow
	numbers []numberPoint
	hists   []histPoint
	exps    []expHistPoint
	sums    []summaryPoint

	buf []byte // JSON scratch

	payloads byteArena  // the slice's raw payloads, while catching up (fill)
	strs     *byteArena // the strings of its rows, while catching up (wireStager.strs)

	// What the stager prepares beyond the rows, for the committing thread only to insert.
	chunker  chunker    // packs chunks (packChunks)
	chunks   []chunkRow // trace_chunks rows, blobs in chunkBuf
	chunkBuf []byte
	text     textDocs  // builds texts (packTexts)
	texts    []textDoc // log_text documents
	textFrom int       // logs of a first group begun in an earlier slice, left to the committing thread

	resCache *resCache // the resources staged so far, by their encoded bytes (rescache.go)
	strip    resStrip

	failed []failedRow // the raw rows of the slice it could not stage (unprojectable.go)
	huge   *hugeRow    // a raw row staged a window at a time (window.go)

	wire        wireStager // stages payloads from their bytes (stage_wire.go)
	pdataOnly   bool       // stage every payload with pdata (tests compare the two paths)
	wireRefused int64      // payloads the wire path left to pdata
}

type resourceEntry struct {
	hash      [16]byte
	service   any // string or nil
	schemaURL string
	attrs     string
}

type scopeEntry struct {
	hash                     [16]byte
	name, version, schemaURL string
	attrs                    string
}

type metricEntry struct {
	hash                    [16]byte
	res, scope              int
	name, description, unit string
	typ                     string
	temporality             int64
	monotonic               bool
}

type logRow struct {
	id, rawID                        int64
	res, scope                       int
	time, observed                   int64
	severity                         int64
	severityText, body, attrs, event string
	traceID, spanID                  string // lowercase hex, "" for NULL (hexID)
	flags                            int64
}

type spanRow struct {
	id, rawID                          int64
	res, scope                         int
	traceID, spanID, parent            string // as logRow's
	traceState, name                   string
	kind                               int64
	start, end                         int64
	statusCode                         int64
	statusMsg, attrs                   string
	flags, dropAttrs, dropEv, dropLink int64
}

type eventRow struct {
	spanRow     int64
	time        int64
	name, attrs string
	dropped     int64
}

type linkRow struct {
	spanRow           int64
	traceID, spanID   string // as logRow's
	traceState, attrs string
	flags, dropped    int64
}

type pointHead struct {
	metric      int
	rawID       int64
	time, start int64
	attrs       string
	flags       int64
}

type numberPoint struct {
	pointHead
	vint, vdouble any
}

type histPoint struct {
	pointHead
	count           int64
	sum, min, max   any
	buckets, bounds string
}

type expHistPoint struct {
	pointHead
	count                  int64
	sum, min, max          any
	scale                  int64
	zeroCount              int64
	zeroThreshold          float64
	posOffset, negOffset   int64
	posBuckets, negBuckets string
}

type summaryPoint struct {
	pointHead
	count     int64
	sum       float64
	quantiles string
}

func (st *stage) reset(nextLogID, nextSpanID int64) {
	st.nextLogID, st.nextSpanID = nextLogID, nextSpanID
	if st.resCache == nil {
		st.resCache = &resCache{}
	}
	st.resources = st.resources[:0]
	st.scopes = st.scopes[:0]
	st.metrics = st.metrics[:0]
	if st.resIndex == nil {
		st.resIndex = map[[16]byte]int{}
		st.scopeIdx = map[[16]byte]int{}
		st.metricIdx = map[[16]byte]int{}
	}
	clear(st.resIndex)
	clear(st.scopeIdx)
	clear(st.metricIdx)
	st.logs = st.logs[:0]
	st.spans = st.spans[:0]
	st.events = st.events[:0]
	st.links = st.links[:0]
	st.numbers = st.numbers[:0]
	st.hists = st.hists[:0]
	st.exps = st.exps[:0]
	st.sums = st.sums[:0]
	st.chunks, st.texts, st.textFrom = st.chunks[:0], st.texts[:0], 0
	st.failed, st.huge = st.failed[:0], nil
}

// pack prepares what the committing thread would otherwise build from the staged rows: the
// trace_chunks rows and the log_text documents.
func (st *stage) pack() {
	st.packChunks()
	st.packTexts()
}

// pointCounts returns the number of points staged for each of schema.PointTables.
func (st *stage) pointCounts() [len(schema.PointTables)]int64 {
	return [...]int64{int64(len(st.numbers)), int64(len(st.hists)), int64(len(st.exps)), int64(len(st.sums))}
}

// records returns the number of projected rows staged (for sizing and tests).
func (st *stage) records() int {
	return len(st.logs) + len(st.spans) + len(st.numbers) + len(st.hists) + len(st.exps) + len(st.sums)
}

// json renders f's output into a string using the scratch buffer.
func (st *stage) json(f func([]byte) []byte) string {
	st.buf = f(st.buf[:0])
	return string(st.buf)
}

func (st *stage) attrs(m pcommon.Map) string {
	if m.Len() == 0 {
		return "{}"
	}
	return st.json(func(b []byte) []byte { return appendJSONMap(b, m) })
}

// resource stages a resource and returns its slice-local index.
func (st *stage) resource(r pcommon.Resource, schemaURL string) int {
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
func (st *stage) stageCached(c *resCached, schemaURL string) int {
	if c.schemaURL != schemaURL {
		return st.stageResource(c.attrs, c.service, schemaURL)
	}
	if i, ok := st.resIndex[c.hash]; ok {
		return i
	}
	st.resources = append(st.resources, resourceEntry{hash: c.hash, schemaURL: c.schemaURL, attrs: c.attrs, service: c.service})
	st.resIndex[c.hash] = len(st.resources) - 1
	return len(st.resources) - 1
}

func (st *stage) stageResource(attrs string, service any, schemaURL string) int {
	st.buf = append(st.buf[:0], attrs...)
	return st.stageResourceJSON(st.buf, service, schemaURL)
}

func (st *stage) stageResourceJSON(attrs []byte, service any, schemaURL string) int {
	h := fnv.New128a()
	h.Write([]byte(schemaURL))
	h.Write([]byte{0})
	h.Write(attrs)
	var key [16]byte
	h.Sum(key[:0])
	if i, ok := st.resIndex[key]; ok {
		return i
	}
	st.resources = append(st.resources, resourceEntry{hash: key, schemaURL: schemaURL, attrs: string(attrs), service: service})
	st.resIndex[key] = len(st.resources) - 1
	return len(st.resources) - 1
}

// scope stages an instrumentation scope and returns its slice-local index.
func (st *stage) scope(s pcommon.InstrumentationScope, schemaURL string) int {
	st.buf = appendJSONMapSorted(st.buf[:0], s.Attributes())
	return st.stageScope(s.Name(), s.Version(), schemaURL, st.buf)
}

// stageScope stages a scope given its attributes' JSON (as scope renders them) and returns its
// slice-local index. name and version may be views of a payload: they are copied when kept.
func (st *stage) stageScope(name, version, schemaURL string, attrs []byte) int {
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
	st.scopes = append(st.scopes, scopeEntry{hash: key, name: strings.Clone(name), version: strings.Clone(version),
		schemaURL: schemaURL, attrs: string(attrs)})
	st.scopeIdx[key] = len(st.scopes) - 1
	return len(st.scopes) - 1
}

// stageMark is how far a stage was filled: rollback returns it there.
type stageMark struct {
	nextLogID, nextSpanID                                                           int64
	resources, scopes, metrics, logs, spans, events, links, nums, hists, exps, sums int
}

func (st *stage) mark() stageMark {
	return stageMark{st.nextLogID, st.nextSpanID, len(st.resources), len(st.scopes), len(st.metrics), len(st.logs),
		len(st.spans), len(st.events), len(st.links), len(st.numbers), len(st.hists), len(st.exps), len(st.sums)}
}

// rollback forgets what was staged since m, which must be a mark of the same slice.
func (st *stage) rollback(m stageMark) {
	for _, e := range st.resources[m.resources:] {
		delete(st.resIndex, e.hash)
	}
	for _, e := range st.scopes[m.scopes:] {
		delete(st.scopeIdx, e.hash)
	}
	for _, e := range st.metrics[m.metrics:] {
		delete(st.metricIdx, e.hash)
	}
	st.nextLogID, st.nextSpanID = m.nextLogID, m.nextSpanID
	st.resources, st.scopes, st.metrics = st.resources[:m.resources], st.scopes[:m.scopes], st.metrics[:m.metrics]
	st.logs, st.spans, st.events, st.links = st.logs[:m.logs], st.spans[:m.spans], st.events[:m.events], st.links[:m.links]
	st.numbers, st.hists, st.exps, st.sums = st.numbers[:m.nums], st.hists[:m.hists], st.exps[:m.exps], st.sums[:m.sums]
}

// stageRow decodes one raw row into st: from its bytes (wireStager), or with pdata where the
// wire path refuses the payload.
func (p *projector) stageRow(st *stage, r *rawRow) error {
	payload, err := p.payload(r)
	if err != nil {
		return err
	}
	if !st.pdataOnly {
		m := st.mark()
		if st.wire.stage(st, r.sig, r.id, payload) == nil {
			return nil
		}
		st.rollback(m)
		st.wireRefused++
	}
	if err := st.stagePdata(r.sig, r.id, payload); err != nil {
		return st.stageDeep(r.sig, r.id, payload, err)
	}
	return nil
}

// stagePdata stages payload, raw row rawID's, decoded by pdata.
func (st *stage) stagePdata(sig signal.Signal, rawID int64, payload []byte) error {
	payload = st.resCache.strip(payload, &st.strip)
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
func (st *stage) addLogs(rawID int64, ld plog.Logs, rs *resStrip) {
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
				row := logRow{
					id:           st.nextLogID,
					rawID:        rawID,
					res:          res,
					scope:        scope,
					time:         int64(lr.Timestamp()),
					observed:     int64(lr.ObservedTimestamp()),
					severity:     int64(lr.SeverityNumber()),
					severityText: lr.SeverityText(),
					attrs:        st.attrs(lr.Attributes()),
					event:        lr.EventName(),
					traceID:      hexID(tid[:]),
					spanID:       hexID(sid[:]),
					flags:        int64(lr.Flags()),
				}
				switch body := lr.Body(); body.Type() {
				case pcommon.ValueTypeStr:
					row.body = body.Str()
				case pcommon.ValueTypeEmpty:
				default:
					row.body = st.json(func(b []byte) []byte { return appendJSONValue(b, body) })
				}
				st.logs = append(st.logs, row)
				st.nextLogID++
			}
		}
	}
}

// addTraces stages td, decoded from the payload that strip describes (resCache.strip).
func (st *stage) addTraces(rawID int64, td ptrace.Traces, strip *resStrip) {
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
				row := spanRow{
					id:         st.nextSpanID,
					rawID:      rawID,
					res:        res,
					scope:      scope,
					parent:     hexID(pid[:]),
					traceState: sp.TraceState().AsRaw(),
					name:       sp.Name(),
					kind:       int64(sp.Kind()),
					start:      int64(sp.StartTimestamp()),
					end:        int64(sp.EndTimestamp()),
					statusCode: int64(sp.Status().Code()),
					statusMsg:  sp.Status().Message(),
					attrs:      st.attrs(sp.Attributes()),
					flags:      int64(sp.Flags()),
					dropAttrs:  int64(sp.DroppedAttributesCount()),
					dropEv:     int64(sp.DroppedEventsCount()),
					dropLink:   int64(sp.DroppedLinksCount()),
				}
				row.traceID, row.spanID = requiredIDs(tid[:], sid[:])
				st.spans = append(st.spans, row)
				evs := sp.Events()
				for e := range evs.Len() {
					ev := evs.At(e)
					st.events = append(st.events, eventRow{
						spanRow: row.id, time: int64(ev.Timestamp()), name: ev.Name(),
						attrs: st.attrs(ev.Attributes()), dropped: int64(ev.DroppedAttributesCount()),
					})
				}
				links := sp.Links()
				for l := range links.Len() {
					ln := links.At(l)
					ltid, lsid := ln.TraceID(), ln.SpanID()
					lr := linkRow{
						spanRow: row.id, traceState: ln.TraceState().AsRaw(), attrs: st.attrs(ln.Attributes()),
						flags: int64(ln.Flags()), dropped: int64(ln.DroppedAttributesCount()),
					}
					lr.traceID, lr.spanID = requiredIDs(ltid[:], lsid[:])
					st.links = append(st.links, lr)
				}
				st.nextSpanID++
			}
		}
	}
}
