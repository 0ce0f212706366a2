package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/loadgen"
)

// Input is one report to merge with the name it is known by (its file).
type Input struct {
	Name   string
	Report *loadgen.Report
}

// Errors of Merge.
var (
	// ErrMismatch marks reports that do not describe the same load.
	ErrMismatch = errors.New("reports differ")
	// ErrDropped marks a merge that would lose values.
	ErrDropped = errors.New("merge would drop values")
)

// ReadFile reads a saved load report.
func ReadFile(path string) (*loadgen.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := loadgen.ReadReport(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Merge checks that the inputs describe one load and merges them exactly
// (loadgen.Merge): counts are summed, histograms merged bucket by bucket,
// and rates divided by the common window, from the earliest start to the
// latest end. The merged report lists every input's shard in Shards.
func Merge(in []Input) (*loadgen.Report, error) {
	if len(in) == 0 {
		return nil, errors.New("merge: no reports")
	}
	for _, x := range in[1:] {
		if err := sameLoad(in[0], x); err != nil {
			return nil, err
		}
	}
	reports := make([]*loadgen.Report, len(in))
	for i, x := range in {
		if err := checkHistograms(x); err != nil {
			return nil, err
		}
		reports[i] = x.Report
	}
	shards, err := collectShards(in)
	if err != nil {
		return nil, err
	}
	out, err := loadgen.Merge(reports...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDropped, err)
	}
	out.Shards = shards
	// Like rate and concurrency, a request budget was split over the shards.
	out.Config.Requests = 0
	for _, r := range reports {
		out.Config.Requests += r.Config.Requests
	}
	return out, nil
}

// perShard are the config fields a shard takes its own part of, or its own
// value for, and the figures a config records of what was sent: they may
// differ between the reports of one load. run_id (each process draws its
// own, the first half of its trace ids), traces_sent and counter_increase
// are in reports that carry them.
var perShard = []string{"rate", "concurrency", "requests", "seed", "run_id", "traces_sent", "counter_increase"}

// sameLoad returns an ErrMismatch error naming the first config field in
// which b differs from a, other than those sharding splits.
func sameLoad(a, b Input) error {
	ca, err := configFields(a.Report.Config)
	if err != nil {
		return err
	}
	cb, err := configFields(b.Report.Config)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(ca, cb))) {
		if slices.Contains(perShard, k) {
			continue
		}
		if !reflect.DeepEqual(ca[k], cb[k]) {
			return fmt.Errorf("%w: %s has %s %s, %s has %s (merge only the reports of one load)",
				ErrMismatch, b.Name, k, show(cb[k]), a.Name, show(ca[k]))
		}
	}
	return nil
}

// configFields returns the config as its JSON fields, so that a mismatch is
// named the way the report spells it and fields added later are compared too.
func configFields(c loadgen.ReportConfig) (map[string]any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("compare configs: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("compare configs: %w", err)
	}
	return m, nil
}

func mergeKeys(a, b map[string]any) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

func show(v any) string {
	if v == nil {
		return "(none)"
	}
	b, _ := json.Marshal(v) // decoded from JSON: cannot fail
	return string(b)
}

// checkHistograms refuses a report whose histograms have another geometry
// than this build's (a merge into ours would clamp or drop their values) or
// hold another count than they claim (a truncated or edited report).
func checkHistograms(x Input) error {
	ref := loadgen.HistogramGeometry()
	for _, name := range slices.Sorted(maps.Keys(x.Report.Signals)) {
		s := x.Report.Signals[name]
		for _, h := range []*loadgen.Histogram{s.Histogram, s.HistogramUncorrected} {
			if h == nil {
				continue
			}
			if h.Unit != ref.Unit || h.Encoding != ref.Encoding || h.Lowest != ref.Lowest ||
				h.Highest != ref.Highest || h.SignificantDigits != ref.SignificantDigits {
				return fmt.Errorf("%w: %s %s histogram is %s %s [%d, %d] at %d digits, want %s %s [%d, %d] at %d digits",
					ErrMismatch, x.Name, name, h.Encoding, h.Unit, h.Lowest, h.Highest, h.SignificantDigits,
					ref.Encoding, ref.Unit, ref.Lowest, ref.Highest, ref.SignificantDigits)
			}
			d, err := h.Decode()
			if err != nil {
				return fmt.Errorf("%s %s: %w", x.Name, name, err)
			}
			if d.TotalCount() != h.Count {
				return fmt.Errorf("%w: %s %s histogram holds %d values, its count says %d",
					ErrDropped, x.Name, name, d.TotalCount(), h.Count)
			}
		}
		if s.Histogram == nil && s.Requests > s.Canceled+s.TransportErrors {
			return fmt.Errorf("%w: %s %s has %d responses and no latency histogram",
				ErrDropped, x.Name, name, s.Requests-s.Canceled-s.TransportErrors)
		}
	}
	return nil
}

// collectShards lists the shards of the inputs (a merged input brings its
// own list) and refuses the same shard twice, which would count its
// requests twice.
func collectShards(in []Input) ([]loadgen.Shard, error) {
	var out []loadgen.Shard
	from := map[string]string{} // shard key -> input name
	count, countFrom := 0, ""
	for _, x := range in {
		for _, s := range shardsOf(x.Report) {
			if s.Count > 0 && count > 0 && s.Count != count {
				return nil, fmt.Errorf("%w: %s is a shard of %d, %s of %d", ErrMismatch, x.Name, s.Count, countFrom, count)
			}
			if s.Count > 0 && count == 0 {
				count, countFrom = s.Count, x.Name
			}
			key := fmt.Sprintf("%d/%d@%s", s.Index, s.Count, s.FirstSend.UTC().Format(time.RFC3339Nano))
			if s.Count > 0 {
				key = fmt.Sprintf("%d/%d", s.Index, s.Count)
			}
			if prev, dup := from[key]; dup {
				return nil, fmt.Errorf("%w: %s and %s both hold shard %s; a shard merged twice counts twice",
					ErrMismatch, prev, x.Name, strings.SplitN(key, "@", 2)[0])
			}
			from[key] = x.Name
			out = append(out, s)
		}
	}
	return out, nil
}
