package query

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/jsonstr"
	"github.com/otelbench/otelbench/internal/signal"
)

// referenceTraceJSON is the trace document as the API wrote it before it
// streamed from columns: the summary through json.Marshal, then each Span
// through json.Encoder.
func referenceTraceJSON(t *testing.T, tree *TraceTree) []byte {
	t.Helper()
	top := *tree
	top.Spans = nil
	head, err := json.Marshal(&top)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Write(head[:len(head)-1])
	buf.WriteString(`,"spans":[`)
	enc := json.NewEncoder(&buf)
	for i := range tree.Spans {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(&tree.Spans[i]); err != nil {
			t.Fatal(err)
		}
	}
	buf.WriteString("]}\n")
	return buf.Bytes()
}

// oddStrings need every kind of escaping encoding/json does.
var oddStrings = []string{
	"plain",
	`<script>alert("x")</script> & more`,
	"quote\" back\\slash /",
	"ctl \x00\x01\b\f\n\r\t\x1f\x7f",
	"bad utf8 \xff\xfe \xe2\x80",
	"sep \u2028 and \u2029, é, 日本, 😀",
	"",
}

// jsonSpan is one span of a test trace; ids are small integers (0: none).
type jsonSpan struct {
	id, parent       uint64
	service, name    string
	status           string // status message; an error when not empty
	attrs            bool
	startUs, lengthU int64
}

// appendJSONSpans appends one traces request of spans of trace tid.
func appendJSONSpans(t *testing.T, e *testEnv, tid string, spans []jsonSpan) {
	t.Helper()
	td := ptrace.NewTraces()
	b, _ := hex.DecodeString(tid)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i, s := range spans {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", s.service)
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID(b))
		sp.SetSpanID(pcommon.SpanID{0xab, 0, 0, 0, 0, 0, byte(s.id >> 8), byte(s.id)})
		if s.parent != 0 {
			sp.SetParentSpanID(pcommon.SpanID{0xab, 0, 0, 0, 0, 0, byte(s.parent >> 8), byte(s.parent)})
		}
		sp.SetName(s.name)
		sp.SetKind(ptrace.SpanKind(i % 6))
		start := t0.Add(time.Duration(s.startUs) * time.Microsecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(s.lengthU) * time.Microsecond)))
		if s.status != "" {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage(s.status)
		}
		if s.attrs {
			m := sp.Attributes()
			m.PutStr("html", `<b>&amp;</b> "q" \ `+"\u2028")
			m.PutStr("name", s.name)
			m.PutInt("i", int64(i))
			m.PutDouble("f", 1.5)
			m.PutBool("ok", i%2 == 0)
			m.PutEmptyBytes("raw").FromRaw([]byte{0, 1, 2, 0xff})
			sl := m.PutEmptySlice("list")
			sl.AppendEmpty().SetStr("a b")
			sl.AppendEmpty().SetInt(-3)
			mm := m.PutEmptyMap("nested")
			mm.PutStr("k", "v > w")
		}
	}
	var m ptrace.ProtoMarshaler
	body, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.Append(context.Background(), signal.Traces, body, len(spans)); err != nil {
		t.Fatal(err)
	}
}

// getTraceJSON fetches a trace document over HTTP and returns its bytes
// and the response (its trailer read).
func getTraceJSON(t *testing.T, base, tid string) ([]byte, *http.Response) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/traces/" + tid)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET trace %s: status %d: %s", tid, resp.StatusCode, body)
	}
	return body, resp
}

// sameJSON reports where got and want first differ.
func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-80)
	t.Errorf("%s: differs from encoding/json at byte %d of %d/%d:\n got  %q\n want %q", what, i, len(got), len(want),
		got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
}

// TestTraceJSONMatchesEncoding: the streamed document of traces read from
// trace_chunks is byte for byte encoding/json's of the materialised tree:
// odd strings, attributes, orphans, several roots, a cycle, several chunks.
func TestTraceJSONMatchesEncoding(t *testing.T) {
	e := newEnv(t, Config{})
	var odd []jsonSpan
	for i, s := range oddStrings {
		odd = append(odd, jsonSpan{id: uint64(i + 1), parent: uint64(i), service: oddStrings[(i+1)%len(oddStrings)],
			name: s, status: oddStrings[(i+2)%len(oddStrings)], attrs: i%2 == 0, startUs: int64(i), lengthU: 100})
	}
	traces := map[string][][]jsonSpan{
		"one span":    {{{id: 1, service: "front", name: "GET /"}}},
		"odd strings": {odd},
		// Two requests (two chunks): roots 1 and 20, orphans 30 and 31
		// (parents absent), 40 and 41 each other's parent, children out of
		// start order, a late child in the second chunk.
		"shapes": {
			{{id: 1, service: "a", name: "root 1", startUs: 0, lengthU: 50, attrs: true},
				{id: 2, parent: 1, service: "b", name: "late", startUs: 30, lengthU: 5},
				{id: 3, parent: 1, service: "b", name: "early", startUs: 10, lengthU: 5, status: "boom <1>"},
				{id: 20, service: "c", name: "root 20", startUs: 5, lengthU: 1},
				{id: 30, parent: 99, service: "a", name: "orphan 30", startUs: 2, lengthU: 1}},
			{{id: 31, parent: 98, service: "d", name: "orphan 31", startUs: 1, lengthU: 1},
				{id: 40, parent: 41, service: "d", name: "cycle 40", startUs: 7, lengthU: 1},
				{id: 41, parent: 40, service: "d", name: "cycle 41", startUs: 8, lengthU: 1},
				{id: 4, parent: 3, service: "a", name: "grandchild", startUs: 11, lengthU: 2, attrs: true},
				{id: 5, parent: 1, service: "c", name: "same start", startUs: 10, lengthU: 1}}},
	}
	ids := map[string]string{}
	n := 0
	for name, reqs := range traces {
		n++
		tid := fmt.Sprintf("%032x", 0xc0ffee00+n)
		ids[name] = tid
		for _, spans := range reqs {
			appendJSONSpans(t, e, tid, spans)
			e.waitProjected(t)
		}
	}
	for _, parallel := range []int{ParallelSpans, 1} {
		t.Run(fmt.Sprintf("parallel from %d spans", parallel), func(t *testing.T) {
			chunkParallelSpans = parallel
			defer func() { chunkParallelSpans = ParallelSpans }()
			checkTraceJSON(t, e, ids)
		})
	}
}

// checkTraceJSON compares each trace's document over HTTP, and
// writeTraceSpans of its materialised tree, with encoding/json's.
func checkTraceJSON(t *testing.T, e *testEnv, ids map[string]string) {
	r := e.api.Reader()
	for name, tid := range ids {
		t.Run(name, func(t *testing.T) {
			id, _ := hex.DecodeString(tid)
			tree, err := r.Trace(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			want := referenceTraceJSON(t, tree)
			if !json.Valid(want) {
				t.Fatalf("reference document is not valid JSON")
			}
			got, resp := getTraceJSON(t, e.base, tid)
			sameJSON(t, "GET /traces/{id}", got, want)
			// The same writer from the materialised Spans (the path of
			// cached and rows-read trees).
			head, err := traceHead(tree, MaxTraceSpans)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := writeTraceSpans(&buf, head, tree, nil, MaxTraceSpans); err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "writeTraceSpans of the Spans", buf.Bytes(), want)
			st := resp.Header.Get("Server-Timing")
			for _, stage := range []string{"db;dur=", "decode;dur=", "build;dur=", "tree;dur="} {
				if !strings.Contains(st, stage) {
					t.Errorf("Server-Timing %q: no %s", st, stage)
				}
			}
			if tr := resp.Trailer.Get("Server-Timing"); !strings.Contains(tr, "encode;dur=") || !strings.Contains(tr, "total;dur=") {
				t.Errorf("Server-Timing trailer %q: want encode and total", tr)
			}
		})
	}
	// The fixture really has the shapes it claims.
	id, _ := hex.DecodeString(ids["shapes"])
	tree, err := r.Trace(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Roots) < 4 || tree.Orphans != 2 || tree.SpanCount != 10 {
		t.Errorf("shapes: %d roots, %d orphans, %d spans; want ≥4, 2, 10", len(tree.Roots), tree.Orphans, tree.SpanCount)
	}
}

// FuzzTraceJSONString: jsonstr.Append writes what json.Marshal writes
// for any string, and appendRawJSON what it writes for any valid RawJSON.
func FuzzTraceJSONString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	for _, s := range []string{`{"a":"<b>"}`, "{ \"x\" : [1, 2,\t3]\n}", `"\u2028` + "\u2028\u2029\"", `{"q":"\" \\ "}`, `[]`, `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonstr.Append(nil, s); !bytes.Equal(got, want) {
			t.Errorf("jsonstr.Append(%q) = %s, want %s", s, got, want)
		}
		if s == "" || !json.Valid([]byte(s)) {
			return
		}
		want, err = json.Marshal(RawJSON(s))
		if err != nil {
			t.Fatalf("json.Marshal(RawJSON(%q)): %v", s, err)
		}
		if got := appendRawJSON(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendRawJSON(%q) = %s, want %s", s, got, want)
		}
	})
}

// FuzzTraceJSONInt: appendInt writes what strconv.AppendInt writes.
func FuzzTraceJSONInt(f *testing.F) {
	for _, v := range []int64{0, 9, 10, 99, 100, -1, -99, 1e18 - 1, 1e18, 1_700_000_000_000_000_000, 1<<63 - 1, -1 << 63, 9_999_999_999_999_999} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		if got, want := appendInt([]byte("x"), v), strconv.AppendInt([]byte("x"), v, 10); !bytes.Equal(got, want) {
			t.Errorf("appendInt(%d) = %s, want %s", v, got, want)
		}
	})
}
