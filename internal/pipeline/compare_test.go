package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func reportWith(cpu, sysPerLine float64, missing int64) *Report {
	r := &Report{Schema: Schema}
	r.Agent.CPUPer1000Lines = cpu
	r.Agent.PeakRSSBytes = 20 << 20
	r.Agent.Syscalls = &SyscallStats{PerLine: sysPerLine}
	r.Totals.Missing = missing
	return r
}

func TestCompareReports(t *testing.T) {
	var base, head, same []*Report
	for i := range 6 {
		d := float64(i) * 0.0001
		base = append(base, reportWith(0.0146+d, 8.0+d, 0))
		head = append(head, reportWith(0.0098+d, 1.9+d, 0))
		same = append(same, reportWith(0.0146+float64(5-i)*0.0001, 8.0+d, 0)) // the same values, another order
	}
	tests := []struct {
		name       string
		base, head []*Report
		wantRegr   []string
		wantDelta  map[string]string
	}{
		{"improvement", base, head, nil, map[string]string{"cpu/1k-lines": "-", "syscalls/line": "-", "missing": "~"}},
		{"regression", head, base, []string{"cpu/1k-lines", "syscalls/line"}, map[string]string{"cpu/1k-lines": "+"}},
		{"no change", base, same, nil, map[string]string{"cpu/1k-lines": "~", "syscalls/line": "~"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CompareReports(tt.base, tt.head, 0.05, 5)
			var got []string
			for _, r := range c.Regressions() {
				got = append(got, r.Metric)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantRegr, ",") {
				t.Errorf("regressions %v, want %v", got, tt.wantRegr)
			}
			for _, r := range c.Rows {
				if want, ok := tt.wantDelta[r.Metric]; ok && !strings.HasPrefix(r.Delta, want) {
					t.Errorf("%s delta %q, want it to start with %q", r.Metric, r.Delta, want)
				}
			}
			var buf bytes.Buffer
			if err := c.WriteText(&buf, "base", "head"); err != nil || !strings.Contains(buf.String(), "syscalls/line") {
				t.Errorf("WriteText: %v\n%s", err, buf.String())
			}
		})
	}
}

func TestReadReports(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	f, err := os.Create(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := reportWith(1, 2, 3).WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bad := filepath.Join(dir, "load.json")
	if err := os.WriteFile(bad, []byte(`{"schema":"otelbench.load/v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := ReadReports([]string{good})
	if err != nil || len(rs) != 1 || rs[0].Totals.Missing != 3 || rs[0].Agent.Syscalls.PerLine != 2 {
		t.Errorf("ReadReports(good) = %+v, %v", rs, err)
	}
	if _, err := ReadReports([]string{good, bad}); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("ReadReports(load report) error = %v, want a schema error", err)
	}
}
