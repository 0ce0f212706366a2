package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/otelbench/otelbench/internal/goldentest"
)

// knownReport builds a report from the fixed samples in
// testdata/known-runs.json, the way Run does after its rounds.
func knownReport(t *testing.T) *Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "known-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Base: "v1.0.0", Head: "main", Rounds: 10, Warmup: -1, Load: []string{"--duration", "2s", "--concurrency", "4"}}
	c := cfg.withDefaults()
	c.Gates = append(c.Gates, Gate{Metric: MetricCPU, Limit: 0.05})
	rep := newReport(c)
	if err := json.Unmarshal(b, &rep.Runs); err != nil {
		t.Fatal(err)
	}
	rep.Base = SideInfo{Name: "base", Spec: "v1.0.0", Commit: "1111111111111111111111111111111111111111"}
	rep.Head = SideInfo{Name: "head", Spec: "main", Commit: "2222222222222222222222222222222222222222"}
	rep.finish(c)
	return rep
}

func TestReportGolden(t *testing.T) {
	rep := knownReport(t)
	for _, tt := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"known.txt.golden", func(b *bytes.Buffer) error { return rep.WriteText(b) }},
		{"known.md.golden", func(b *bytes.Buffer) error { return rep.WriteMarkdown(b) }},
		{"known.bench", func(b *bytes.Buffer) error { return rep.WriteBenchfmt(b) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, tt.name, b.Bytes())
		})
	}
	if rep.Verdict != VerdictRegression || rep.ExitCode != ExitRegression {
		t.Errorf("verdict = %s (exit %d), want regression (exit 1)", rep.Verdict, rep.ExitCode)
	}
	var failed []string
	for _, g := range rep.Gates {
		if g.Fail {
			failed = append(failed, g.Metric)
		}
	}
	if diff := cmp.Diff([]string{MetricThroughput, MetricP99}, failed); diff != "" {
		t.Errorf("failed gates (-want +got):\n%s", diff)
	}
}

// TestAgainstBenchstat checks every cell of our comparison against what the
// real benchstat printed (CSV) for the same rounds written by WriteBenchfmt.
// With -update it reruns benchstat to refresh the golden.
func TestAgainstBenchstat(t *testing.T) {
	rep := knownReport(t)
	benchPath := filepath.Join("testdata", "known.bench")
	csvPath := filepath.Join("testdata", "known.benchstat.csv")
	if goldentest.Update() {
		bs, err := exec.LookPath("/tmp/peers/benchstat")
		if err != nil {
			if bs, err = exec.LookPath("benchstat"); err != nil {
				t.Fatal("-update needs benchstat: GOBIN=/tmp/peers go install golang.org/x/perf/cmd/benchstat@latest")
			}
		}
		var b bytes.Buffer
		if err := rep.WriteBenchfmt(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(benchPath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct{ format, path string }{{"csv", csvPath}, {"text", filepath.Join("testdata", "known.benchstat.txt")}} {
			out, err := exec.Command(bs, "-format", f.format, "-col", "/side", benchPath).Output()
			if err != nil {
				t.Fatalf("benchstat: %v", err)
			}
			if err := os.WriteFile(f.path, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cells := readBenchstatCSV(t, csvPath)
	for _, res := range rep.Results {
		m, _ := metricByKey(res.Metric)
		unit, scale := tidyUnit(m)
		row, ok := cells[unit]
		if !ok {
			t.Errorf("%s: no %q table in benchstat output", res.Metric, unit)
			continue
		}
		c := res.Comparison
		for _, v := range []struct {
			what      string
			got, want float64
		}{{"base median", c.Base.Center * scale, row.baseCenter}, {"head median", c.Head.Center * scale, row.headCenter}} {
			if math.Abs(v.got-v.want) > 1e-9*math.Max(1, math.Abs(v.want)) {
				t.Errorf("%s %s = %v, benchstat %v", res.Metric, v.what, v.got, v.want)
			}
		}
		got := [4]string{c.Base.RangePct(), c.Head.RangePct(), c.Delta, c.Test}
		if got != row.strs {
			t.Errorf("%s: got CI/CI/delta/test %q, benchstat %q", res.Metric, got, row.strs)
		}
	}
}

// tidyUnit returns the unit benchstat shows for m and the factor from our
// base unit to it (benchstat turns "ns" into "sec").
func tidyUnit(m Metric) (string, float64) {
	if u, ok := strings.CutSuffix(m.Unit, "-ns"); ok {
		return u + "-sec", m.BenchScale / 1e9
	}
	return m.Unit, m.BenchScale
}

type benchstatRow struct {
	baseCenter, headCenter float64
	strs                   [4]string // base CI, head CI, delta, "p=… n=…"
}

// readBenchstatCSV reads benchstat -format csv output: per unit a header
// row ",base,,head" then ",UNIT,CI,UNIT,CI,vs base,P" then one row per
// benchmark.
func readBenchstatCSV(t *testing.T, path string) map[string]benchstatRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run go test -update with benchstat installed)", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]benchstatRow{}
	unit := ""
	for _, rec := range recs {
		switch {
		case len(rec) >= 7 && rec[0] == "" && rec[2] == "CI":
			unit = rec[1]
		case len(rec) >= 7 && rec[0] == BenchName && unit != "":
			bc, err1 := strconv.ParseFloat(rec[1], 64)
			hc, err2 := strconv.ParseFloat(rec[3], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("bad benchstat row %q", rec)
			}
			out[unit] = benchstatRow{bc, hc, [4]string{rec[2], rec[4], rec[5], rec[6]}}
		}
	}
	return out
}
