package linesink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/logline"
	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/store"
)

// request encodes one logs request whose records carry bodies; a body
// starting with "map:" is sent as a map body {"log": rest} (the shape of
// agents that parse lines into attributes).
func request(t *testing.T, enc otlpcodec.Encoding, bodies ...string) []byte {
	t.Helper()
	ld := plog.NewLogs()
	recs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, b := range bodies {
		r := recs.AppendEmpty()
		switch {
		case len(b) > 4 && b[:4] == "map:":
			m := r.Body().SetEmptyMap()
			m.PutInt("n", 1)
			m.PutStr("log", b[4:])
		case b != "":
			r.Body().SetStr(b)
		}
	}
	req := plogotlp.NewExportRequestFromLogs(ld)
	var out []byte
	var err error
	if enc == otlpcodec.EncodingJSON {
		out, err = req.MarshalJSON()
	} else {
		out, err = req.MarshalProto()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func line(f logline.Format, stream int, seq int64) string {
	return string(logline.Append(nil, f, logline.Line{Stream: stream, Seq: seq, TimeNs: time.Now().UnixNano()}, 80))
}

func post(t *testing.T, url string, enc otlpcodec.Encoding, comp otlpcodec.Compression, body []byte) int {
	t.Helper()
	if comp != otlpcodec.CompressionNone {
		var err error
		if body, err = otlpcodec.Compress(nil, body, comp); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url+"/v1/logs", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", enc.ContentType())
	if comp != otlpcodec.CompressionNone {
		req.Header.Set("Content-Encoding", comp.String())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// sendScript posts the lines of a fixed script: stream 0 gets 0,1,2,1(dup),
// 5,3 (out of order); 4 never arrives; stream 1 gets 0 twice; plus one
// unparseable body, one empty body and one line of a stream that was never
// written.
func sendScript(t *testing.T, url string, enc otlpcodec.Encoding, comp otlpcodec.Compression) {
	t.Helper()
	sendScriptWith(t, enc, func(body []byte) error {
		if code := post(t, url, enc, comp, body); code != http.StatusOK {
			return fmt.Errorf("status %d, want 200", code)
		}
		return nil
	})
}

// sendScriptWith sends the script's requests, encoded in enc, with send.
func sendScriptWith(t *testing.T, enc otlpcodec.Encoding, send func([]byte) error) {
	t.Helper()
	bodies := [][]string{
		{line(logline.JSON, 0, 0), line(logline.Logfmt, 0, 1), "map:" + line(logline.Plain, 0, 2)},
		{line(logline.JSON, 0, 1), line(logline.JSON, 0, 5), line(logline.JSON, 0, 3), "hello", ""},
		{line(logline.JSON, 1, 0), line(logline.JSON, 1, 0), line(logline.JSON, 7, 0)},
	}
	for _, b := range bodies {
		if err := send(request(t, enc, b...)); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
}

func checkScript(t *testing.T, a *Accounting) {
	t.Helper()
	r, err := a.Result([]int64{6, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []StreamStats{
		{Stream: 0, Written: 6, Received: 6, Distinct: 5, Missing: 1, Duplicates: 1, OutOfOrder: 1},
		{Stream: 1, Written: 1, Received: 2, Distinct: 1, Missing: 0, Duplicates: 1},
	}
	for i, w := range want {
		g := r.Streams[i]
		g.Latency, g.Histogram = w.Latency, nil
		if g != w {
			t.Errorf("stream %d: got %+v, want %+v", i, g, w)
		}
		if r.Streams[i].Histogram.Count != w.Distinct {
			t.Errorf("stream %d: histogram holds %d values, want %d", i, r.Streams[i].Histogram.Count, w.Distinct)
		}
	}
	if r.Unparseable != 2 || r.Foreign != 1 || r.Requests != 3 {
		t.Errorf("got unparseable %d foreign %d requests %d, want 2, 1, 3", r.Unparseable, r.Foreign, r.Requests)
	}
	if r.Totals.Missing != 1 || r.Totals.Duplicates != 2 || r.Totals.Written != 7 {
		t.Errorf("totals %+v: want missing 1, duplicates 2, written 7", r.Totals)
	}
}

func TestHandler(t *testing.T) {
	tests := []struct {
		name string
		enc  otlpcodec.Encoding
		comp otlpcodec.Compression
	}{
		{"proto", otlpcodec.EncodingProto, otlpcodec.CompressionNone},
		{"proto gzip", otlpcodec.EncodingProto, otlpcodec.CompressionGzip},
		{"json zstd", otlpcodec.EncodingJSON, otlpcodec.CompressionZstd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccounting()
			srv := httptest.NewServer(a.Handler())
			defer srv.Close()
			sendScript(t, srv.URL, tt.enc, tt.comp)
			checkScript(t, a)
			if got := post(t, srv.URL, tt.enc, otlpcodec.CompressionNone, []byte("\xff\xff\xff")); got != http.StatusBadRequest {
				t.Errorf("corrupt body: status %d, want 400", got)
			}
		})
	}
}

// TestTapServe runs the durable ingest server on loopback with a real store
// and checks that acknowledged requests are accounted and refused ones are
// not.
func TestTapServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := ingestsrv.New(ctx, ingestsrv.Config{Config: store.Config{Dir: t.TempDir()}, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAccounting()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: a.Tap(srv.Handler(), 0)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	sendScript(t, url, otlpcodec.EncodingProto, otlpcodec.CompressionGzip)
	if got := post(t, url, otlpcodec.EncodingProto, otlpcodec.CompressionNone, []byte("\xff\xff\xff")); got != http.StatusBadRequest {
		t.Errorf("corrupt body: status %d, want 400", got)
	}
	checkScript(t, a)
	if n := srv.Store().Stats().Logs.Records; n != 11 {
		t.Errorf("store holds %d records, want the 11 acknowledged", n)
	}
	_ = hs.Shutdown(context.Background())
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("serve: %v", err)
	}
	cancel()
	if err := srv.Close(context.Background()); err != nil {
		t.Errorf("close: %v", err)
	}
}

func TestDistinctBelow(t *testing.T) {
	s := newStreamAcct()
	for _, seq := range []int64{0, 1, 63, 64, 65, 200} {
		s.add(logline.Line{Seq: seq}, 0)
	}
	tests := []struct{ n, want int64 }{{0, 0}, {1, 1}, {64, 3}, {65, 4}, {66, 5}, {201, 6}, {10000, 6}}
	for _, tt := range tests {
		if got := s.distinctBelow(tt.n); got != tt.want {
			t.Errorf("distinctBelow(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func FuzzForEachBody(f *testing.F) {
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = forEachBody(otlpcodec.EncodingProto, b, func([]byte) bool { return true })
	})
}
