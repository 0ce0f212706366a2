package main

import (
	"strings"
	"testing"
)

func TestBenchEndToEnd(t *testing.T) {
	code, out := runCLI(t, "bench", "--duration", "1s", "--records", "10", "--concurrency", "2", "--no-progress")
	if code != 0 || !strings.Contains(out, "nothing lost") || !strings.Contains(out, "VmHWM") ||
		!strings.Contains(out, "pages per 1,000 records") {
		t.Errorf("exit %d, want 0 with \"nothing lost\", the peak RSS and the projection; output:\n%s", code, out)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--sync", "sometimes"},
		{"bench", "--mix", "logs=0"},
		{"bench", "--endpoint", "http://x"}, // bench serves its own endpoint
		{"bench", "extra"},
		{"bench", "--catch-up", "-1s"},
	} {
		if code, out := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, out)
		}
	}
}
