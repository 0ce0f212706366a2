package main

import "testing"

func TestParseServerTiming(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		ms           float64
		plan         string
	}{
		{"logs", `db;dur=6.700;desc="fts"`, 6.7, "fts"},
		{"trace", `db;dur=5.100, decode;dur=3.200, build;dur=6.000, tree;dur=12.345;desc="161000 spans"`, 12.345, "161000 spans"},
		{"old trace", `tree;dur=93.000;desc="161000 spans"`, 93, "161000 spans"},
		{"no desc", `db;dur=1.5`, 1.5, ""},
		{"none", ``, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, plan := parseServerTiming(tc.header)
			if ms != tc.ms || plan != tc.plan {
				t.Errorf("parseServerTiming(%q) = %v, %q; want %v, %q", tc.header, ms, plan, tc.ms, tc.plan)
			}
		})
	}
}
