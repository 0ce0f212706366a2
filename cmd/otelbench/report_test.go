package main

import (
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

func TestShardUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"shard out of range", []string{"--shard", "4/4"}},
		{"shard not I/N", []string{"--shard", "2"}},
		{"shards without an index", []string{"--shards", "3"}},
		{"start not RFC 3339", []string{"--start-at", "tomorrow"}},
		{"both starts", []string{"--start-at", "2026-01-01T00:00:00Z", "--start-in", "1s"}},
		{"fewer workers than shards", []string{"--shard", "0/16", "--concurrency", "8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(loadgen.EnvShardIndex, "")
			t.Setenv(loadgen.EnvShards, "")
			wantRun(t, append([]string{"load", "--requests", "100", "--endpoint", "http://127.0.0.1:1"}, tt.args...), exitcode.Usage)
		})
	}
}

// TestReportMergeCLI runs two shards of one load against a real server,
// as a Kubernetes Indexed Job would (index from the environment), then
// merges and shows their reports.
func TestReportMergeCLI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		t.Setenv(loadgen.EnvShardIndex, string(rune('0'+i)))
		t.Setenv(loadgen.EnvShards, "2")
		f := filepath.Join(dir, "shard-"+string(rune('0'+i))+".json")
		code, out := runCLI(t, "load", "--endpoint", srv.URL, "--requests", "40", "--concurrency", "4", "--records", "5", "--json", f)
		if code != 0 {
			t.Fatalf("shard %d: exit %d:\n%s", i, code, out)
		}
		files = append(files, f)
	}
	merged := filepath.Join(dir, "merged.json")
	code, out := runCLI(t, append([]string{"report", "merge", "--json", merged}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d:\n%s", code, out)
	}
	for _, want := range []string{"merged 2 reports", "shard 0/2 first send", "shard 1/2 first send", "start spread", "sent 200 records in 40 requests"} {
		if !strings.Contains(out, want) {
			t.Errorf("merge output lacks %q:\n%s", want, out)
		}
	}
	code, shown := runCLI(t, "report", "show", merged)
	if code != 0 || shown != out {
		t.Errorf("show: exit %d, output differs from the merge's:\n%s\nwant:\n%s", code, shown, out)
	}

	other := filepath.Join(dir, "other.json")
	t.Setenv(loadgen.EnvShards, "")
	if code, out := runCLI(t, "load", "--endpoint", srv.URL, "--requests", "20", "--records", "7", "--json", other); code != 0 {
		t.Fatalf("other load: exit %d:\n%s", code, out)
	}
	for _, tt := range []struct {
		name string
		args []string
		want int
	}{
		{"different load refused", []string{"report", "merge", files[0], other}, 1},
		{"same shard twice refused", []string{"report", "merge", files[0], files[0]}, 1},
		{"missing file", []string{"report", "merge", filepath.Join(dir, "nope.json")}, 1},
		{"no reports", []string{"report", "merge"}, 2},
		{"show takes one", []string{"report", "show", files[0], files[1]}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantRun(t, tt.args, tt.want)
		})
	}
	if _, err := os.Stat(merged); err != nil {
		t.Errorf("merged JSON not written: %v", err)
	}
}
