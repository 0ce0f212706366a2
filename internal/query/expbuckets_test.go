package query

import (
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelbench/otelbench/internal/racetest"
)

func TestReduceExp(t *testing.T) {
	tests := []struct {
		name             string
		scale, posOff    int32
		pos              string
		wantScale, wantO int32
		want             []uint64
		ok               bool
	}{
		{"fits", 3, 5, "[1,2,3]", 3, 5, []uint64{1, 2, 3}, true},
		{"empty", 3, 0, "[]", 3, 0, nil, true},
		{"too wide halves", 3, 0, "[" + strings.Repeat("1,", MaxExpBuckets) + "1]", 2, 0, fill(MaxExpBuckets/2, 2, 1), true},
		{"negative offset", 0, -3, "[1,1,1,1]", 0, -3, []uint64{1, 1, 1, 1}, true},
		{"malformed", 0, 0, "[1,,2]", 0, 0, nil, false},
		{"not numbers", 0, 0, `["a"]`, 0, 0, nil, false},
		{"below scale -10", -10, 0, "[" + strings.Repeat("1,", MaxExpBuckets) + "1]", 0, 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scale, off, pos, _, neg, ok := reduceExp(tt.scale, tt.posOff, tt.pos, 0, "[]")
			if ok != tt.ok {
				t.Fatalf("ok: got %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if scale != tt.wantScale || off != tt.wantO || len(neg) != 0 || !equalCounts(pos, tt.want) {
				t.Errorf("got scale %d off %d pos %v, want %d %d %v", scale, off, pos, tt.wantScale, tt.wantO, tt.want)
			}
		})
	}
}

// fill is n counts of v, then one of last.
func fill(n int, v, last uint64) []uint64 {
	out := make([]uint64, n+1)
	for i := range n {
		out[i] = v
	}
	out[n] = last
	return out
}

func equalCounts(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSeriesHugeExpHistogramBounded reads a series over an exponential
// histogram of 1.3M buckets: the heap grows by a few MB, not the ~90 MB of
// full slices and maps, and the percentiles stay accurate.
func TestSeriesHugeExpHistogramBounded(t *testing.T) {
	if testing.Short() || racetest.Enabled {
		t.Skip("ingests a 1.3M-bucket histogram; heap figures under the race detector are not the program's")
	}
	const buckets = 1_300_000
	e := newEnv(t, Config{})
	since := time.Now().Add(-10 * time.Minute).Truncate(time.Minute)
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "api")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("latency")
	eh := m.SetEmptyExponentialHistogram()
	eh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	p := eh.DataPoints().AppendEmpty()
	p.SetTimestamp(pcommon.NewTimestampFromTime(since.Add(time.Minute)))
	p.SetScale(20)
	p.Positive().SetOffset(0)
	counts := make([]uint64, buckets)
	for i := range counts {
		counts[i] = 1
	}
	p.Positive().BucketCounts().FromRaw(counts)
	p.SetCount(buckets)
	p.SetSum(buckets)
	e.appendMetrics(t, md)
	e.waitProjected(t)
	u := e.base + "/api/v1/metrics/series?name=latency&step=1h&since=" + url.QueryEscape(since.Format(time.RFC3339))
	base := heapNow()
	stop := heapPeak(time.Millisecond)
	var res SeriesResult
	getJSON(t, u, http.StatusOK, &res)
	growth := int64(stop()) - int64(base)
	t.Logf("heap growth during the series read: %d MB", growth>>20)
	if growth > 32<<20 {
		t.Errorf("heap grew by %d MB, want at most 32 MB", growth>>20)
	}
	if len(res.Series) != 1 || len(res.Series[0].Points) != 1 || res.Series[0].Points[0].P50 == nil {
		t.Fatalf("got %+v, want one point with p50", res)
	}
	// Bucket i holds (2^(i/2^20), 2^((i+1)/2^20)]: the median is near bucket 650,000.
	want := math.Exp2(float64(buckets/2) / (1 << 20))
	if got := *res.Series[0].Points[0].P50; math.Abs(got-want)/want > 0.01 {
		t.Errorf("p50: got %v, want %v within 1%%", got, want)
	}
}
