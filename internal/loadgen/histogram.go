package loadgen

import (
	"errors"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms record microseconds from 1 µs to one hour with three
// significant digits (0.1% precision), the range and precision wrk2 uses.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histSigFigs = 3
)

// HistogramUnit is the unit of recorded values.
const HistogramUnit = "us"

// HistogramEncoding names the wire form of Histogram.HDR.
const HistogramEncoding = "hdrhistogram-v2-compressed-base64"

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histSigFigs)
}

// recordLatency records d, clamped into the histogram's range.
func recordLatency(h *hdrhistogram.Histogram, d time.Duration) {
	us := int64(d / time.Microsecond)
	_ = h.RecordValue(min(max(us, histLowest), histHighest)) // clamped: cannot fail
}

// Histogram is the mergeable form of a latency HDR histogram in a report:
// the standard HdrHistogram V2 compressed encoding (readable by every
// HdrHistogram implementation, e.g. HistogramLogProcessor) plus its geometry.
type Histogram struct {
	Unit              string `json:"unit"`     // "us"
	Encoding          string `json:"encoding"` // HistogramEncoding
	Lowest            int64  `json:"lowest"`
	Highest           int64  `json:"highest"`
	SignificantDigits int64  `json:"significant_digits"`
	Count             int64  `json:"count"`
	HDR               string `json:"hdr"`
}

// encodeHistogram returns the mergeable form of h.
func encodeHistogram(h *hdrhistogram.Histogram) (*Histogram, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	return &Histogram{
		Unit: HistogramUnit, Encoding: HistogramEncoding,
		Lowest: h.LowestTrackableValue(), Highest: h.HighestTrackableValue(),
		SignificantDigits: h.SignificantFigures(), Count: h.TotalCount(), HDR: string(b),
	}, nil
}

// Decode returns the HDR histogram of h.
func (h *Histogram) Decode() (*hdrhistogram.Histogram, error) {
	if h == nil {
		return nil, errors.New("no histogram")
	}
	if h.Encoding != HistogramEncoding || h.Unit != HistogramUnit {
		return nil, fmt.Errorf("histogram encoding %q unit %q: want %q in %q", h.Encoding, h.Unit, HistogramEncoding, HistogramUnit)
	}
	d, err := hdrhistogram.Decode([]byte(h.HDR))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return d, nil
}

// Percentiles are latency figures in milliseconds.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// percentiles reads the figures of a microsecond histogram.
func percentiles(h *hdrhistogram.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	v := h.ValueAtPercentilesSlice([]float64{50, 90, 99, 99.9})
	return Percentiles{
		P50: ms(v[0]), P90: ms(v[1]), P99: ms(v[2]), P999: ms(v[3]),
		Max: ms(h.Max()), Mean: h.Mean() / 1000,
	}
}

// NewHistogram returns an empty latency histogram with the geometry of
// every report histogram (mergeable with them).
func NewHistogram() *hdrhistogram.Histogram { return newHistogram() }

// RecordLatency records d in h, clamped into the histogram's range.
func RecordLatency(h *hdrhistogram.Histogram, d time.Duration) { recordLatency(h, d) }

// EncodeHistogram returns the mergeable report form of h.
func EncodeHistogram(h *hdrhistogram.Histogram) (*Histogram, error) { return encodeHistogram(h) }

// PercentilesOf returns the millisecond figures of a microsecond histogram.
func PercentilesOf(h *hdrhistogram.Histogram) Percentiles { return percentiles(h) }
