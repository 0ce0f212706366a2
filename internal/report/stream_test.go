package report

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestReadStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var docs [][]string // each report's lines
	for i := range 3 {
		start := t0.Add(time.Duration(i) * time.Millisecond)
		r := build(t, sample{started: start, seconds: 5, shard: shard(i, 3, start), lat: map[string][]int64{"logs": latencies(rng, 200, 100, 9000)}}, nil)
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"))
	}
	prefix := func(i int) string { return "[pod/otelbench-load-" + string(rune('0'+i)) + "-x/load] " }

	// kubectl logs --prefix, the pods' lines interleaved, a warning between.
	var interleaved strings.Builder
	interleaved.WriteString(prefix(1) + "otelbench: warning: something on stderr\n")
	for j := 0; ; j++ {
		done := true
		for i, d := range docs {
			if j < len(d) {
				interleaved.WriteString(prefix(i) + d[j] + "\n")
				done = false
			}
		}
		if done {
			break
		}
	}
	// Plain concatenation, as `cat shard-*.json` gives.
	var plain strings.Builder
	plain.WriteString("some banner\n")
	for _, d := range docs {
		plain.WriteString(strings.Join(d, "\n") + "\n")
	}
	tests := []struct {
		name        string
		in          string
		wantSkipped int
		wantErr     string
	}{
		{"kubectl logs --prefix, interleaved", interleaved.String(), 1, ""},
		{"concatenated", plain.String(), 1, ""},
		{"cut short", strings.Join(docs[0][:len(docs[0])-3], "\n") + "\n", 0, "cut short"},
		{"not a report", "{\n  \"schema\": \"other/v1\"\n}\n", 0, "schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, skipped, err := ReadStream(strings.NewReader(tt.in), "-")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(in) != 3 || skipped != tt.wantSkipped {
				t.Fatalf("got %d reports, %d lines skipped; want 3 and %d", len(in), skipped, tt.wantSkipped)
			}
			m, err := Merge(in)
			if err != nil {
				t.Fatal(err)
			}
			if m.Totals.Requests != 3*203 || len(m.Shards) != 3 {
				t.Errorf("got %d requests over %d shards, want %d over 3", m.Totals.Requests, len(m.Shards), 3*203)
			}
		})
	}
}
