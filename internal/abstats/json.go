package abstats

import (
	"encoding/json"
	"math"
)

// finite returns v, or nil when JSON cannot hold it (±Inf, NaN).
func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// MarshalJSON writes an unbounded interval end (too few samples) as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	return json.Marshal(struct {
		plain
		Lo *float64 `json:"ci_lo"`
		Hi *float64 `json:"ci_hi"`
	}{plain(s), finite(s.Lo), finite(s.Hi)})
}

// MarshalJSON adds the ratio of the medians, null when the base is zero.
func (c Comparison) MarshalJSON() ([]byte, error) {
	type plain Comparison
	return json.Marshal(struct {
		plain
		Ratio *float64 `json:"ratio"`
	}{plain(c), finite(c.Ratio)})
}
