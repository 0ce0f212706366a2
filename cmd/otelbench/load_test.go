package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/loadgen"
)

// runCLI runs the root command with args and returns the exit code and output.
func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		out.WriteString("error: " + err.Error())
	}
	return exitcode.Code(err), out.String()
}

// wantRun runs the root command with args and checks its exit code and that its output holds
// every one of want; it returns the output.
func wantRun(t *testing.T, args []string, code int, want ...string) string {
	t.Helper()
	got, out := runCLI(t, args...)
	if got != code {
		t.Errorf("exit %d, want %d; output:\n%s", got, code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	return out
}

func TestLoadUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"bad mix", []string{"--mix", "logs=x"}},
		{"unknown signal", []string{"--mix", "events=1"}},
		{"empty mix", []string{"--mix", "logs=0"}},
		{"bad encoding", []string{"--encoding", "xml"}},
		{"bad compression", []string{"--compression", "brotli"}},
		{"negative rate", []string{"--rate", "-5"}},
		{"negative records", []string{"--records", "-1"}},
		{"bad header", []string{"--header", "novalue"}},
		{"bad endpoint", []string{"--endpoint", "ftp://localhost:4318"}},
		{"unknown protocol", []string{"--protocol", "thrift"}},
		{"bad run id", []string{"--run-id", "xyz"}},
		{"bad stages", []string{"--stages", "30s"}},
		{"bad slo", []string{"--find-max", "--slo", "p42=1s"}},
		{"min success above 1", []string{"--min-success", "1.5"}},
		{"bad temporality", []string{"--temporality", "sometimes"}},
		{"max error rate above 1", []string{"--max-error-rate", "2"}},
		{"positional arg", []string{"extra"}},
		{"unknown flag", []string{"--nope"}},
		{"not a duration", []string{"--duration", "10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantRun(t, append([]string{"load", "--requests", "1"}, tt.args...), exitcode.Usage)
		})
	}
}

func TestLoadRunsAndWritesJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Tenant") != "t1" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "run.json")
	code, out := runCLI(t, "load", "--endpoint", srv.URL, "--requests", "30", "--concurrency", "2",
		"--records", "4", "--header", "X-Tenant=t1", "--json", path, "--no-progress")
	if code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, out)
	}
	if !strings.Contains(out, "records acked") || !strings.Contains(out, "p99.9") {
		t.Errorf("no report table in output:\n%s", out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := loadgen.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Requests != 30 || rep.Totals.RecordsAcked != 120 || rep.Config.Model != "closed" {
		t.Errorf("report: requests %d acked %d model %q, want 30, 120, closed", rep.Totals.Requests, rep.Totals.RecordsAcked, rep.Config.Model)
	}
}

func TestLoadMaxErrorRateExits1(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/traces") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	base := []string{"load", "--endpoint", srv.URL, "--requests", "30", "--records", "1", "--no-progress", "--min-success", "0"}
	wantRun(t, append(base, "--max-error-rate", "0.5"), 0)                        // a third failing, under a 50% limit
	wantRun(t, append(base, "--max-error-rate", "0.1"), 1, "error rate exceeded") // and over a 10% limit
}

func TestLoadJSONToStdout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	code, out := runCLI(t, "load", "--endpoint", srv.URL, "--requests", "3", "--rate", "100", "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	rep, err := loadgen.ReadReport(strings.NewReader(out))
	if err != nil {
		t.Fatalf("stdout is not a JSON report: %v\n%s", err, out)
	}
	if rep.Config.Model != "open" || rep.Totals.LatencyUncorrected == nil {
		t.Errorf("model %q, uncorrected %v: want open with uncorrected latency", rep.Config.Model, rep.Totals.LatencyUncorrected)
	}
}
