package ingestsrv

import (
	"net/http"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/store"
)

// TestTotalsSurviveRestart: /api/v1/stats "signals" count since the process started, and
// "totals_since_created" since the data directory was created: after a restart on the same
// directory the first start again at zero and the second go on from what was stored before;
// /metrics exports the unprojectable count.
func TestTotalsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	body := encode(t, otlptest.Logs(0, 3), otlpcodec.EncodingProto)
	ts := startServer(t, Config{Config: store.Config{Dir: dir}})
	for range 2 {
		wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", body), 200)
	}
	waitProjected(t, ts.Store())
	ts.stop(t)

	ts = startServer(t, Config{Config: store.Config{Dir: dir}})
	wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", body), 200)
	waitProjected(t, ts.Store())
	st := getStats(t, ts.url)
	tests := []struct {
		name      string
		got       SignalStats
		requests  uint64
		records   uint64
		projected uint64
	}{
		{"since process start", st.Signals["logs"], 1, 3, 3},
		{"since data directory created", st.TotalsSinceCreated.Signals["logs"], 3, 9, 9},
	}
	for _, tt := range tests {
		if tt.got.Requests != tt.requests || tt.got.Records != tt.records || tt.got.RecordsProjected != tt.projected {
			t.Errorf("%s: got %d requests, %d records, %d projected; want %d, %d, %d", tt.name,
				tt.got.Requests, tt.got.Records, tt.got.RecordsProjected, tt.requests, tt.records, tt.projected)
		}
	}
	if st.TotalsSinceCreated.Signals["logs"].Bytes != 3*uint64(len(body)) {
		t.Errorf("bytes since created: got %d, want %d", st.TotalsSinceCreated.Signals["logs"].Bytes, 3*len(body))
	}
	resp, err := send(nil, http.MethodGet, ts.url+"/metrics", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "otelbench_projection_unprojectable_total 0\n"; !strings.Contains(string(resp.body), want) {
		t.Errorf("/metrics lacks %q", want)
	}
}
