package tracechunk

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEncodeDecode packs traces with the Encoder and reads them back with DecodeTraceChunk.
func TestEncodeDecode(t *testing.T) {
	type span struct {
		id, parent               string
		start, end, kind, status int64
		svc, name, msg, attrs    string
	}
	tests := []struct {
		name  string
		spans []span
		want  []PackedSpan
	}{
		{"one root", []span{{"00000000000000aa", "", 100, 150, 2, 0, "api", "GET /", "", "{}"}},
			[]PackedSpan{{SpanID: 0xaa, Start: 100, End: 150, Kind: 2, Service: "api", Name: "GET /"}}},
		{"shared strings and a bad id", []span{
			{"0000000000000001", "", 10, 20, 1, 2, "api", "op", "boom", `{"k":1}`},
			{"0000000000000002", "0000000000000001", 5, 30, 3, 0, "api", "op", "", ""},
			{"NOTHEX0000000003", "0000000000000002", 40, 40, 0, 0, "db", "", "", ""},
		}, []PackedSpan{
			{SpanID: 1, Start: 10, End: 20, Kind: 1, Status: 2, Service: "api", Name: "op", StatusMessage: "boom", Attributes: `{"k":1}`},
			{SpanID: 2, ParentID: 1, Start: 5, End: 30, Kind: 3, Service: "api", Name: "op"},
			{SpanID: 0, ParentID: 2, Start: 40, End: 40, Service: "db"},
		}},
	}
	var e Encoder
	var out []byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.Begin(tt.spans[0].start)
			for _, s := range tt.spans {
				e.Add(s.id, s.parent, s.start, s.end, s.kind, s.status, s.svc, s.name, s.msg, s.attrs)
			}
			out = e.Append(out[:0])
			if got := TraceChunkSpans(string(out)); got != len(tt.want) {
				t.Errorf("TraceChunkSpans = %d, want %d", got, len(tt.want))
			}
			var got []PackedSpan
			if err := DecodeTraceChunk(string(out), func(s *PackedSpan) { got = append(got, *s) }); err != nil {
				t.Fatalf("DecodeTraceChunk: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded spans (-want +got):\n%s", diff)
			}
			if err := DecodeTraceChunk(string(out[:len(out)-1]), func(*PackedSpan) {}); err != ErrBadTraceChunk {
				t.Errorf("truncated chunk: got %v, want ErrBadTraceChunk", err)
			}
		})
	}
}
