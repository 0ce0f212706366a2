package ingestsrv

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestStatsRefusesUnknownParams: /api/v1/stats takes no parameters (docs/api.md,
// held to the same table by the query package's TestAPIDocMatchesHandlers),
// so any parameter gets 400 naming it, as on the query endpoints.
func TestStatsRefusesUnknownParams(t *testing.T) {
	ts := startServer(t, Config{})
	tests := []struct {
		query     string
		wantCode  int
		wantParam string
	}{
		{"", http.StatusOK, ""},
		{"?since=1h", http.StatusBadRequest, "since"},
		{"?host.name=node-7", http.StatusBadRequest, "host.name"},
		{"?b=1&a=2", http.StatusBadRequest, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp, err := http.Get(ts.url + "/api/v1/stats" + tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error   string         `json:"error"`
				Param   string         `json:"param"`
				Signals map[string]any `json:"signals"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if resp.StatusCode != tt.wantCode || body.Param != tt.wantParam {
				t.Fatalf("got %d param %q (%s), want %d param %q", resp.StatusCode, body.Param, body.Error, tt.wantCode, tt.wantParam)
			}
			if tt.wantCode == http.StatusOK && len(body.Signals) == 0 {
				t.Errorf("got no signals in the stats document, want one entry per signal")
			}
		})
	}
}
