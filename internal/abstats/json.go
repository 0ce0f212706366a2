package abstats

import (
	"encoding/json"
	"math"
)

// Finite returns v, or nil when JSON cannot hold it (±Inf, NaN): for
// fields that marshal a non-finite figure as null.
func Finite(v float64) *float64 {
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
	}{plain(s), Finite(s.Lo), Finite(s.Hi)})
}

// MarshalJSON adds the ratio of the medians, null when the base is zero.
func (c Comparison) MarshalJSON() ([]byte, error) {
	type plain Comparison
	return json.Marshal(struct {
		plain
		Ratio *float64 `json:"ratio"`
	}{plain(c), Finite(c.Ratio)})
}
