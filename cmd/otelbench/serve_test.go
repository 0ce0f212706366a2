package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestServeHelpFitsAScreen(t *testing.T) {
	code, out := runCLI(t, "serve", "--help")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	if n := strings.Count(out, "\n"); n > 40 {
		t.Errorf("serve --help is %d lines, want at most 40:\n%s", n, out)
	}
	for _, name := range serveTuningFlags {
		if strings.Contains(out, "--"+name+" ") {
			t.Errorf("serve --help shows the tuning flag --%s", name)
		}
	}
	for _, name := range []string{"addr", "data", "auth-token", "auth-ingest", "pprof", "max-body",
		"raw-retention", "shutdown-timeout", "sync", "memory-limit", "max-conns"} {
		if !strings.Contains(out, "--"+name+" ") {
			t.Errorf("serve --help lacks --%s", name)
		}
	}
}

// TestServeTuningFlagsDocumented holds docs/serve-tuning.md to the hidden flags.
func TestServeTuningFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/serve-tuning.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range serveTuningFlags {
		if !strings.Contains(string(doc), "`--"+name) {
			t.Errorf("docs/serve-tuning.md does not document --%s", name)
		}
	}
}

func TestServeByteSizeFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    int
		wantOut string
	}{
		// Validate names both sizes in bytes: the units were parsed.
		{"units parsed", []string{"--max-body", "8MiB", "--inflight-bytes", "1KiB"}, 2, "budget 1024 cannot hold one 8388608-byte body"},
		{"not a size", []string{"--max-body", "big"}, 2, `"big" is not a byte size`},
		{"fraction", []string{"--queue-bytes", "1.5MiB"}, 2, `"1.5MiB" is not a byte size`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "d")}, tt.args...)
			wantRun(t, args, tt.want, tt.wantOut)
		})
	}
	_, out := runCLI(t, "serve", "--help")
	if !strings.Contains(out, "--max-body size") || !strings.Contains(out, "(default 4MiB)") {
		t.Errorf("serve --help does not show --max-body as a size with default 4MiB:\n%s", out)
	}
}

// TestServeBusyPortLeavesNoDataDir checks that serve listens, on its HTTP
// and its gRPC address, before it creates its data directory.
func TestServeBusyPortLeavesNoDataDir(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name     string
		args     []string
		wantHint string
	}{
		{"http", []string{"--addr", busy.Addr().String(), "--grpc-addr", "127.0.0.1:0"}, "--addr"},
		{"grpc", []string{"--addr", "127.0.0.1:0", "--grpc-addr", busy.Addr().String()}, "--grpc-addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			code, out := runCLI(t, append([]string{"serve", "--data", data}, tt.args...)...)
			if code != 1 || !strings.Contains(out, "address already in use") || !strings.Contains(out, tt.wantHint) {
				t.Errorf("exit %d, want 1 with a listen error naming %s\n%s", code, tt.wantHint, out)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("data directory after a busy port: stat err %v, want it absent", err)
			}
		})
	}
}

// TestServePrintsDashboardURL starts serve on a free port, reads the
// dashboard URL it prints, fetches nothing, and stops it.
func TestServePrintsDashboardURL(t *testing.T) {
	pr, pw := io.Pipe()
	root := newRootCmd()
	root.SetOut(io.Discard)
	root.SetErr(pw)
	root.SetArgs([]string{"serve", "--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "d")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()

	want := regexp.MustCompile(`dashboard at http://127\.0\.0\.1:[1-9][0-9]*/ui/`)
	var got string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if want.MatchString(sc.Text()) {
			got = sc.Text()
			break
		}
	}
	cancel()
	go io.Copy(io.Discard, pr) // drain the shutdown log
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	if got == "" {
		t.Errorf("serve printed no line matching %v", want)
	}
}

func TestDashboardURL(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4318}, "http://127.0.0.1:4318/ui/"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 4318}, "http://127.0.0.1:4318/ui/"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, "http://[::1]:80/ui/"},
	}
	for _, tt := range tests {
		if got := dashboardURL(tt.addr); got != tt.want {
			t.Errorf("dashboardURL(%v) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
