package tracechunk

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decoded is a span as Decode gives it, with its strings and resource hash read back.
type decoded struct {
	SpanID, ParentID                         uint64
	Start, End                               int64
	Kind, Status                             int32
	Service, Name, StatusMessage, Attributes string
	Resource                                 [16]byte
}

// decodeAll decodes chunk p, placed at offset pad of a buffer, into decoded spans.
func decodeAll(p []byte, count, pad int) ([]decoded, error) {
	buf := append(make([]byte, pad), p...)
	c := Columns{IDs: make([]uint64, count), Parents: make([]uint64, count),
		Start: make([]int64, count), End: make([]int64, count), Text: make([]Text, count)}
	res, err := Decode(buf[pad:], uint32(pad), c)
	if err != nil {
		return nil, err
	}
	str := func(r Ref) string { return string(buf[r.Off : r.Off+r.N]) }
	out := make([]decoded, count)
	for i := range out {
		tx := c.Text[i]
		out[i] = decoded{SpanID: c.IDs[i], ParentID: c.Parents[i], Start: c.Start[i], End: c.End[i],
			Kind: tx.Kind, Status: tx.Status, Service: str(tx.Str[StrService]), Name: str(tx.Str[StrName]),
			StatusMessage: str(tx.Str[StrStatusMessage]), Attributes: str(tx.Str[StrAttributes])}
		copy(out[i].Resource[:], buf[res.Off+16*tx.Resource:])
	}
	return out, nil
}

// TestEncodeDecode packs traces with the Encoder and reads them back with Decode.
func TestEncodeDecode(t *testing.T) {
	resA, resB := [16]byte{1, 2, 3}, [16]byte{15: 9}
	tests := []struct {
		name  string
		spans []Span
		want  []decoded
	}{
		{"one root", []Span{{SpanID: "00000000000000aa", Start: 100, End: 150, Kind: 2, Service: "api", Name: "GET /", Attributes: "{}", Resource: resA}},
			[]decoded{{SpanID: 0xaa, Start: 100, End: 150, Kind: 2, Service: "api", Name: "GET /", Resource: resA}}},
		{"shared strings and resources, a bad id", []Span{
			{SpanID: "0000000000000001", Start: 10, End: 20, Kind: 1, Status: 2, Service: "api", Name: "op", StatusMessage: "boom", Attributes: `{"k":1}`, Resource: resA},
			{SpanID: "0000000000000002", ParentID: "0000000000000001", Start: 5, End: 30, Kind: 3, Service: "api", Name: "op", Resource: resB},
			{SpanID: "NOTHEX0000000003", ParentID: "0000000000000002", Start: 40, End: 40, Service: "db", Resource: resA},
		}, []decoded{
			{SpanID: 1, Start: 10, End: 20, Kind: 1, Status: 2, Service: "api", Name: "op", StatusMessage: "boom", Attributes: `{"k":1}`, Resource: resA},
			{SpanID: 2, ParentID: 1, Start: 5, End: 30, Kind: 3, Service: "api", Name: "op", Resource: resB},
			{SpanID: 0, ParentID: 2, Start: 40, End: 40, Service: "db", Resource: resA},
		}},
	}
	var e Encoder
	var out []byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.Begin(tt.spans[0].Start)
			for i := range tt.spans {
				e.Add(&tt.spans[i])
			}
			out = e.Append(out[:0])
			if got := spanCount(out); got != len(tt.want) {
				t.Errorf("spanCount = %d, want %d", got, len(tt.want))
			}
			got, err := decodeAll(out, len(tt.want), 7)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded spans (-want +got):\n%s", diff)
			}
			for _, bad := range []struct {
				name  string
				p     []byte
				count int
			}{
				{"truncated", out[:len(out)-1], len(tt.want)},
				{"one span too many", out, len(tt.want) + 1},
				{"other version", append([]byte{Version - 1}, out[1:]...), len(tt.want)},
			} {
				if _, err := decodeAll(bad.p, bad.count, 0); !errors.Is(err, ErrBadTraceChunk) {
					t.Errorf("%s: got %v, want ErrBadTraceChunk", bad.name, err)
				}
			}
		})
	}
}
