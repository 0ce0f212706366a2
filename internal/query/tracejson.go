package query

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/otelbench/otelbench/internal/hexid"
	"github.com/otelbench/otelbench/internal/jsonstr"
)

// The trace document is written by hand, span by span, straight from the
// tree's columns (traceView) or from its Spans: no Span is materialised for
// a trace read from trace_chunks, and nothing goes through reflection. The
// bytes are exactly those json.Encoder wrote before (one Encode per span,
// so each span ends in a newline; HTML-safe string escaping; attributes
// compacted as encoding/json does a Marshaler's output), which
// TestTraceJSONMatchesEncoding and FuzzTraceJSONString check.

const (
	traceFlushAt  = 32 << 10 // write out the buffer once it holds this much
	maxPooledJSON = 1 << 20  // do not keep a buffer a huge span grew
)

var traceJSONBufs sync.Pool // of *[]byte

// traceHead returns the document up to the spans: the summary fields of t
// as json.Marshal writes them, then `,"spans":[`.
func traceHead(t *TraceTree, limit int) ([]byte, error) {
	top := *t // trees may be shared (cached); never mutate t
	top.Spans = nil
	top.Truncated = t.SpanCount > limit
	head, err := json.Marshal(&top)
	if err != nil {
		return nil, err
	}
	return append(head[:len(head)-1], `,"spans":[`...), nil // drop the closing brace
}

// writeTraceSpans writes head, every span of the trace (v's when v is not
// nil, else t.Spans) and the closing brackets to w, through one pooled
// buffer flushed every traceFlushAt bytes. It returns w's first error.
func writeTraceSpans(w io.Writer, head []byte, t *TraceTree, v *traceView, limit int) error {
	bp, _ := traceJSONBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
		*bp = make([]byte, 0, 2*traceFlushAt)
	}
	defer func() {
		if cap(*bp) <= maxPooledJSON {
			traceJSONBufs.Put(bp)
		}
	}()
	buf := append((*bp)[:0], head...)
	n := len(t.Spans)
	if v != nil {
		n = len(v.b.order)
	}
	// Spans are in depth-first pre-order: the first limit hold every
	// span's parent, so a truncated answer is still a tree.
	n = min(n, limit)
	for k := range n {
		if k > 0 {
			buf = append(buf, ',')
		}
		if v != nil {
			buf = v.appendSpan(buf, k)
		} else {
			buf = appendSpanJSON(buf, &t.Spans[k])
		}
		if len(buf) >= traceFlushAt {
			if _, err := w.Write(buf); err != nil {
				*bp = buf
				return err
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, "]}\n"...)
	_, err := w.Write(buf)
	*bp = buf
	return err
}

// appendSpan appends the span at pre-order position k as JSON and a newline.
func (v *traceView) appendSpan(buf []byte, k int) []byte {
	b := v.b
	i := b.order[k]
	tx := &b.text[i]
	buf = append(buf, `{"span_id":"`...)
	buf = hexid.Append64(buf, b.ids[i])
	if p := b.parents[i]; p != 0 {
		buf = append(buf, `","parent_span_id":"`...)
		buf = hexid.Append64(buf, p)
	}
	buf = append(buf, `","parent":`...)
	buf = appendInt(buf, int64(b.parentPos[k]))
	buf = append(buf, `,"depth":`...)
	buf = appendInt(buf, int64(b.depth[k]))
	buf = append(buf, `,"children":`...)
	buf = appendInt(buf, int64(b.childCount[i+1]))
	buf = append(buf, `,"service":`...)
	buf = jsonstr.Append(buf, b.str(tx.Str[strService]))
	buf = append(buf, `,"name":`...)
	buf = jsonstr.Append(buf, b.str(tx.Str[strName]))
	buf = append(buf, `,"kind":`...)
	buf = appendInt(buf, int64(tx.Kind))
	buf = append(buf, `,"start_time_unix_nano":`...)
	buf = appendInt(buf, b.start[i])
	buf = append(buf, `,"end_time_unix_nano":`...)
	buf = appendInt(buf, b.end[i])
	buf = append(buf, `,"status_code":`...)
	buf = appendInt(buf, int64(tx.Status))
	if r := tx.Str[strStatusMessage]; r.N > 0 {
		buf = append(buf, `,"status_message":`...)
		buf = jsonstr.Append(buf, b.str(r))
	}
	if r := tx.Str[strAttributes]; r.N > 0 {
		buf = append(buf, `,"attributes":`...)
		buf = appendRawJSON(buf, b.str(r))
	}
	buf = append(buf, v.resJSON[tx.Resource]...)
	return append(buf, "}\n"...)
}

// appendSpanJSON appends s as json.Encoder encodes it (with its newline).
func appendSpanJSON(buf []byte, s *Span) []byte {
	buf = append(buf, `{"span_id":`...)
	buf = jsonstr.Append(buf, s.SpanID)
	if s.ParentSpanID != "" {
		buf = append(buf, `,"parent_span_id":`...)
		buf = jsonstr.Append(buf, s.ParentSpanID)
	}
	buf = append(buf, `,"parent":`...)
	buf = appendInt(buf, int64(s.Parent))
	buf = append(buf, `,"depth":`...)
	buf = appendInt(buf, int64(s.Depth))
	buf = append(buf, `,"children":`...)
	buf = appendInt(buf, int64(s.Children))
	buf = append(buf, `,"service":`...)
	buf = jsonstr.Append(buf, s.Service)
	buf = append(buf, `,"name":`...)
	buf = jsonstr.Append(buf, s.Name)
	buf = append(buf, `,"kind":`...)
	buf = appendInt(buf, int64(s.Kind))
	buf = append(buf, `,"start_time_unix_nano":`...)
	buf = appendInt(buf, s.StartTimeUnixNano)
	buf = append(buf, `,"end_time_unix_nano":`...)
	buf = appendInt(buf, s.EndTimeUnixNano)
	buf = append(buf, `,"status_code":`...)
	buf = appendInt(buf, int64(s.StatusCode))
	if s.StatusMessage != "" {
		buf = append(buf, `,"status_message":`...)
		buf = jsonstr.Append(buf, s.StatusMessage)
	}
	if s.Attributes != "" {
		buf = append(buf, `,"attributes":`...)
		buf = appendRawJSON(buf, s.Attributes)
	}
	if s.Resource != "" {
		buf = append(buf, `,"resource":`...)
		buf = appendRawJSON(buf, s.Resource)
	}
	return append(buf, "}\n"...)
}

// decimalPairs holds the two decimal digits of 0..99.
var decimalPairs = func() (t [200]byte) {
	for i := range 100 {
		t[2*i], t[2*i+1] = byte('0'+i/10), byte('0'+i%10)
	}
	return t
}()

// appendInt appends v in decimal, as strconv.AppendInt(buf, v, 10) does,
// with fast paths for the small counts of a span (depth, kind, ...) and
// for nanosecond timestamps (19 digits): strconv's general loop was ~12
// ms of writing a 161,000-span trace.
func appendInt(buf []byte, v int64) []byte {
	switch {
	case 0 <= v && v < 10:
		return append(buf, byte('0'+v))
	case 10 <= v && v < 100:
		return append(buf, decimalPairs[2*v], decimalPairs[2*v+1])
	case v < 1e18:
		return strconv.AppendInt(buf, v, 10)
	}
	// 1e18 <= v <= MaxInt64 (~9.2e18): exactly 19 digits, as 3 + 8 + 8.
	u := uint64(v)
	top, rest := uint32(u/1e16), u%1e16
	buf = append(buf, byte('0'+top/100), decimalPairs[2*(top%100)], decimalPairs[2*(top%100)+1])
	buf = append8(buf, uint32(rest/1e8))
	return append8(buf, uint32(rest%1e8))
}

// append8 appends x < 1e8 as exactly 8 decimal digits.
func append8(buf []byte, x uint32) []byte {
	a, b := x/10000, x%10000
	return append(buf,
		decimalPairs[2*(a/100)], decimalPairs[2*(a/100)+1], decimalPairs[2*(a%100)], decimalPairs[2*(a%100)+1],
		decimalPairs[2*(b/100)], decimalPairs[2*(b/100)+1], decimalPairs[2*(b%100)], decimalPairs[2*(b%100)+1])
}

const hexDigits = "0123456789abcdef"

// rawPlain marks the bytes appendRawJSON copies without a look: all but
// quotes, backslashes, whitespace, <, >, & and 0xE2 (the first byte of
// U+2028 and U+2029).
var rawPlain = func() (t [256]bool) {
	for c := range 256 {
		switch c {
		case '"', '\\', ' ', '\t', '\n', '\r', '<', '>', '&', 0xe2:
		default:
			t[c] = true
		}
	}
	return t
}()

// appendRawJSON appends the stored JSON text raw as encoding/json writes a
// Marshaler's output: whitespace outside strings dropped, <, >, & and
// U+2028/U+2029 escaped as \u sequences. raw is the store's own JSON and
// is not validated (encoding/json would reject invalid text; the store
// writes none).
func appendRawJSON[S []byte | string | RawJSON](buf []byte, raw S) []byte {
	start := 0
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if rawPlain[c] {
			continue
		}
		switch c {
		case '"':
			inString = !inString
		case '\\':
			if inString {
				i++ // the escaped byte is never special
			}
		case ' ', '\t', '\n', '\r':
			if !inString {
				buf = append(buf, raw[start:i]...)
				start = i + 1
			}
		case '<', '>', '&':
			buf = append(buf, raw[start:i]...)
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			start = i + 1
		case 0xe2:
			if i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xa8 {
				buf = append(buf, raw[start:i]...)
				buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xf])
				i += 2
				start = i + 1
			}
		}
	}
	return append(buf, raw[start:]...)
}
