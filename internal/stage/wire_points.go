package stage

import (
	"math"

	"github.com/otelbench/otelbench/internal/otlpwire"
)

func (w *wireStager) expHistPoint(st *Stage, metric int, rawID int64, b []byte) error {
	var pt ExpHistPoint
	var stats histStats
	var hasPos, hasNeg bool
	pt.PosBuckets, pt.NegBuckets = "[]", "[]"
	r := w.pointReader(metric, rawID, &otlpwire.ExpHistogramPoint, b, 1, 10)
	for r.Next() {
		if stats.field(&r.Reader, 5, 12, 13) {
			continue
		}
		switch r.Num {
		case 4:
			pt.Count = int64(r.U)
		case 6:
			pt.Scale = int64(otlpwire.Zigzag32(r.U))
		case 7:
			pt.ZeroCount = int64(r.U)
		case 14:
			pt.ZeroThreshold = math.Float64frombits(r.U)
		case 8, 9:
			if r.Num == 8 && hasPos || r.Num == 9 && hasNeg {
				return errWire // pdata merges the two
			}
			offset, buckets, err := w.buckets(st, r.Bytes())
			if err != nil {
				return err
			}
			if r.Num == 8 {
				hasPos, pt.PosOffset, pt.PosBuckets = true, offset, buckets
			} else {
				hasNeg, pt.NegOffset, pt.NegBuckets = true, offset, buckets
			}
		case 11:
			if err := w.checkExemplar(r.Bytes()); err != nil {
				return err
			}
		}
	}
	if err := r.finish(&pt.pointHead); err != nil {
		return err
	}
	pt.Sum, pt.Min, pt.Max = stats.values()
	st.Exps = append(st.Exps, pt)
	return nil
}

// buckets reads an exponential histogram's Buckets: its offset and its counts as JSON.
func (w *wireStager) buckets(st *Stage, b []byte) (int64, string, error) {
	var offset int64
	w.u64 = w.u64[:0]
	r := otlpwire.NewReader(&otlpwire.Buckets, b)
	for r.Next() {
		switch {
		case r.Num == 1:
			offset = int64(otlpwire.Zigzag32(r.U))
		case r.Num == 2 && r.Wire == otlpwire.Len: // a packed run, its varints checked whole
			for q := 0; q < len(r.Bytes()); {
				var u uint64
				u, q, _ = otlpwire.ConsumeVarint(r.Bytes(), q)
				w.u64 = append(w.u64, u)
			}
		case r.Num == 2:
			w.u64 = append(w.u64, r.U)
		}
	}
	if err := r.Err(); err != nil {
		return 0, "", err
	}
	return offset, st.json(func(b []byte) []byte { return appendJSONUint64s(b, w.u64) }), nil
}

func (w *wireStager) summaryPoint(st *Stage, metric int, rawID int64, b []byte) error {
	var pt SummaryPoint
	w.val = append(w.val[:0], '[')
	r := w.pointReader(metric, rawID, &otlpwire.SummaryPoint, b, 7, 8)
	for r.Next() {
		switch r.Num {
		case 4:
			pt.Count = int64(r.U)
		case 5:
			pt.Sum = math.Float64frombits(r.U)
		case 6:
			if err := w.quantile(r.Bytes()); err != nil {
				return err
			}
		}
	}
	if err := r.finish(&pt.pointHead); err != nil {
		return err
	}
	w.val = append(w.val, ']')
	pt.Quantiles = w.str(w.val)
	st.Sums = append(st.Sums, pt)
	return nil
}

// quantile appends a ValueAtQuantile to the JSON array in w.val.
func (w *wireStager) quantile(b []byte) error {
	var q, v float64
	r := otlpwire.NewReader(&otlpwire.Quantile, b)
	for r.Next() {
		switch r.Num {
		case 1:
			q = math.Float64frombits(r.U)
		case 2:
			v = math.Float64frombits(r.U)
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if len(w.val) > 1 {
		w.val = append(w.val, ',')
	}
	w.val = appendJSONQuantile(w.val, q, v)
	return nil
}

// checkExemplar checks an Exemplar, which the stage does not keep. Its attributes go through
// appendKV rather than otlpwire.Check so that they are held to the same rules as kept ones
// (string-table refusals, and the nesting that deepValues renders).
func (w *wireStager) checkExemplar(b []byte) error {
	r := otlpwire.NewReader(&otlpwire.Exemplar, b)
	for r.Next() {
		if r.Num == 7 {
			var err error
			if w.scratch, _, _, _, err = w.appendKV(w.scratch[:0], r.Bytes(), 0); err != nil {
				return err
			}
		}
	}
	return r.Err()
}
