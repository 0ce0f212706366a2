package ingestsrv

import (
	"fmt"
	"net/http"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/signal"
)

// TestRoundTrip posts every signal in every encoding and compression, then
// checks the answer, /api/v1/stats and the projected rows.
func TestRoundTrip(t *testing.T) {
	ts := startServer(t, Config{})
	db := ts.Store().ReadDB()
	type signalCase struct {
		sig   signal.Signal
		req   message
		n     int
		table string // projected rows, one per record
	}
	signals := []signalCase{
		{signal.Logs, otlptest.Logs(0, 3), 3, "SELECT count(*) FROM logs"},
		{signal.Traces, otlptest.Traces(0, 4, 0), 4, "SELECT count(*) FROM spans"},
		{signal.Metrics, otlptest.Metrics(0, 10, 0), 10,
			`SELECT (SELECT count(*) FROM number_points) + (SELECT count(*) FROM histogram_points) +
			        (SELECT count(*) FROM exp_histogram_points) + (SELECT count(*) FROM summary_points)`},
	}
	want := map[string]uint64{}
	for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
		for _, comp := range []otlpcodec.Compression{otlpcodec.CompressionNone, otlpcodec.CompressionGzip, otlpcodec.CompressionZstd} {
			for _, sc := range signals {
				t.Run(fmt.Sprintf("%v/%v/%v", sc.sig, enc, comp), func(t *testing.T) {
					body, err := otlpcodec.Compress(nil, encode(t, sc.req, enc), comp)
					if err != nil {
						t.Fatal(err)
					}
					ce := comp.String()
					if comp == otlpcodec.CompressionNone {
						ce = ""
					}
					resp := post(t, nil, ts.url+sc.sig.Path(), enc.ContentType(), ce, body)
					wantStatus(t, resp, http.StatusOK)
					if got := resp.header.Get("Content-Type"); got != enc.ContentType() {
						t.Errorf("Content-Type = %q, want %q", got, enc.ContentType())
					}
					if rejected, msg := parseResponse(t, sc.sig, enc, resp.body); rejected != 0 || msg != "" {
						t.Errorf("partial_success rejected=%d message=%q, want none", rejected, msg)
					}
					want[sc.sig.String()] += uint64(sc.n)
					if got := getStats(t, ts.url).Signals[sc.sig.String()].Records; got != want[sc.sig.String()] {
						t.Errorf("stats records = %d, want %d", got, want[sc.sig.String()])
					}
				})
			}
		}
	}
	waitProjected(t, ts.Store())
	st := getStats(t, ts.url)
	for _, sc := range signals {
		w := int(want[sc.sig.String()])
		if got := count(t, db, sc.table); got != w {
			t.Errorf("%v: %d projected rows, want %d", sc.sig, got, w)
		}
		if got := st.Signals[sc.sig.String()]; got.RecordsProjected != uint64(w) || got.Requests != 6 || got.Bytes == 0 {
			t.Errorf("%v stats = %+v, want %d records projected, 6 requests, bytes > 0", sc.sig, got, w)
		}
	}
}

// TestMetricTypes stores each of the five metric types on its own and finds
// its points in the right table.
func TestMetricTypes(t *testing.T) {
	ts := startServer(t, Config{})
	db := ts.Store().ReadDB()
	tables := map[pmetric.MetricType]string{
		pmetric.MetricTypeGauge:                "number_points",
		pmetric.MetricTypeSum:                  "number_points",
		pmetric.MetricTypeHistogram:            "histogram_points",
		pmetric.MetricTypeExponentialHistogram: "exp_histogram_points",
		pmetric.MetricTypeSummary:              "summary_points",
	}
	want := map[string]int{}
	for i, typ := range otlptest.MetricTypes {
		for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
			req := otlptest.Metrics(uint64(100*i), 3, 0, typ)
			resp := post(t, nil, ts.url+"/v1/metrics", enc.ContentType(), "", encode(t, req, enc))
			wantStatus(t, resp, http.StatusOK)
			want[tables[typ]] += 3
		}
	}
	waitProjected(t, ts.Store())
	for table, n := range want {
		if got := count(t, db, "SELECT count(*) FROM "+table); got != n {
			t.Errorf("%s: %d rows, want %d", table, got, n)
		}
	}
	if got := count(t, db, "SELECT count(DISTINCT name) FROM metrics"); got != len(otlptest.MetricTypes) {
		t.Errorf("%d distinct metrics, want %d", got, len(otlptest.MetricTypes))
	}
}

// TestPartialSuccess sends requests mixing valid and invalid records: 200
// with partial_success, only the valid records stored.
func TestPartialSuccess(t *testing.T) {
	ts := startServer(t, Config{})
	tests := []struct {
		name     string
		sig      signal.Signal
		req      message
		valid    int
		rejected int64
		rows     string
	}{
		{"spans with zero ids", signal.Traces, otlptest.Traces(0, 3, 2), 3, 2, "SELECT count(*) FROM spans"},
		{"metrics without name or data", signal.Metrics, otlptest.Metrics(0, 5, 4), 5, 2,
			"SELECT count(*) FROM metrics WHERE name = '' OR name = 'otelbench.test.nodata'"},
	}
	for _, tt := range tests {
		for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
			t.Run(tt.name+"/"+enc.String(), func(t *testing.T) {
				before := getStats(t, ts.url).Signals[tt.sig.String()].Records
				resp := post(t, nil, ts.url+tt.sig.Path(), enc.ContentType(), "", encode(t, tt.req, enc))
				wantStatus(t, resp, http.StatusOK)
				rejected, msg := parseResponse(t, tt.sig, enc, resp.body)
				if rejected != tt.rejected || msg == "" {
					t.Errorf("partial_success rejected=%d message=%q, want %d and a message", rejected, msg, tt.rejected)
				}
				if got := getStats(t, ts.url).Signals[tt.sig.String()].Records - before; got != uint64(tt.valid) {
					t.Errorf("stored %d records, want %d", got, tt.valid)
				}
			})
		}
	}
	waitProjected(t, ts.Store())
	db := ts.Store().ReadDB()
	if got := count(t, db, "SELECT count(*) FROM spans"); got != 6 {
		t.Errorf("%d spans stored, want the 6 valid ones", got)
	}
	if got := count(t, db, "SELECT count(*) FROM spans WHERE trace_id = '' OR span_id = '' OR trace_id GLOB '0000*0000'"); got != 0 {
		t.Errorf("%d invalid spans stored", got)
	}
	if got := count(t, db, tests[1].rows); got != 0 {
		t.Errorf("%d invalid metrics stored", got)
	}
}

// parseResponse is otlptest.PartialSuccess, the name every test here uses.
var parseResponse = otlptest.PartialSuccess
