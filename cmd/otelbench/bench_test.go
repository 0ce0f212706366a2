package main

import (
	"strings"
	"testing"
)

func TestBenchEndToEnd(t *testing.T) {
	// Nothing lost, the peak RSS, and the projection's pages.
	wantRun(t, []string{"bench", "--duration", "1s", "--records", "10", "--concurrency", "2", "--no-progress"}, 0,
		"nothing lost", "VmHWM", "pages per 1,000 records")
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--sync", "sometimes"},
		{"bench", "--mix", "logs=0"},
		{"bench", "--endpoint", "http://x"}, // bench serves its own endpoint
		{"bench", "extra"},
		{"bench", "--catch-up", "-1s"},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) { wantRun(t, args, 2) })
	}
}
