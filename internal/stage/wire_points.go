package stage

import (
	"math"

	"github.com/otelbench/otelbench/internal/otlpwire"
)

func (w *wireStager) expHistPoint(st *Stage, metric int, rawID int64, b []byte) error {
	pt := ExpHistPoint{pointHead: pointHead{Metric: metric, RawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	var sum, mn, mx uint64
	var hasSum, hasMin, hasMax, hasPos, hasNeg bool
	pt.PosBuckets, pt.NegBuckets = "[]", "[]"
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var ok bool
		if pos, ok, err = w.pointField(&pt.pointHead, b, num, wt, p, 1, 10); ok {
			if err != nil {
				return err
			}
			continue
		}
		var u uint64
		var v []byte
		switch num {
		case 4:
			u, pos, err = i64Field(b, p, wt)
			pt.Count = int64(u)
		case 5:
			sum, pos, err = i64Field(b, p, wt)
			hasSum = true
		case 12:
			mn, pos, err = i64Field(b, p, wt)
			hasMin = true
		case 13:
			mx, pos, err = i64Field(b, p, wt)
			hasMax = true
		case 6:
			u, pos, err = varintField(b, p, wt)
			pt.Scale = int64(otlpwire.Zigzag32(u))
		case 7:
			u, pos, err = i64Field(b, p, wt)
			pt.ZeroCount = int64(u)
		case 14:
			u, pos, err = i64Field(b, p, wt)
			pt.ZeroThreshold = math.Float64frombits(u)
		case 8, 9:
			if num == 8 && hasPos || num == 9 && hasNeg {
				return errWire // pdata merges the two
			}
			if v, pos, err = lenField(b, p, wt); err != nil {
				return err
			}
			var offset int64
			var buckets string
			if offset, buckets, err = w.buckets(st, v); err != nil {
				return err
			}
			if num == 8 {
				hasPos, pt.PosOffset, pt.PosBuckets = true, offset, buckets
			} else {
				hasNeg, pt.NegOffset, pt.NegBuckets = true, offset, buckets
			}
		case 11:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.checkExemplar(v)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	pt.Attrs = w.attrsString(&w.attrs)
	pt.Sum, pt.Min, pt.Max = optI64(hasSum, sum), optI64(hasMin, mn), optI64(hasMax, mx)
	st.Exps = append(st.Exps, pt)
	return nil
}

// buckets reads an exponential histogram's Buckets: its offset and its counts as JSON.
func (w *wireStager) buckets(st *Stage, b []byte) (int64, string, error) {
	var offset int64
	w.u64 = w.u64[:0]
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return 0, "", err
		}
		var u uint64
		switch {
		case num == 1:
			u, pos, err = varintField(b, p, wt)
			offset = int64(otlpwire.Zigzag32(u))
		case num == 2 && wt == otlpwire.Len:
			var v []byte
			if v, pos, err = otlpwire.ConsumeBytes(b, p); err != nil {
				return 0, "", err
			}
			for q := 0; q < len(v); {
				if u, q, err = otlpwire.ConsumeVarint(v, q); err != nil {
					return 0, "", err
				}
				w.u64 = append(w.u64, u)
			}
		case num == 2:
			u, pos, err = varintField(b, p, wt)
			w.u64 = append(w.u64, u)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return 0, "", err
		}
	}
	return offset, st.json(func(b []byte) []byte { return appendJSONUint64s(b, w.u64) }), nil
}

func (w *wireStager) summaryPoint(st *Stage, metric int, rawID int64, b []byte) error {
	pt := SummaryPoint{pointHead: pointHead{Metric: metric, RawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	w.val = append(w.val[:0], '[')
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var ok bool
		if pos, ok, err = w.pointField(&pt.pointHead, b, num, wt, p, 7, 8); ok {
			if err != nil {
				return err
			}
			continue
		}
		var u uint64
		switch num {
		case 4:
			u, pos, err = i64Field(b, p, wt)
			pt.Count = int64(u)
		case 5:
			u, pos, err = i64Field(b, p, wt)
			pt.Sum = math.Float64frombits(u)
		case 6:
			var v []byte
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.quantile(v)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	pt.Attrs = w.attrsString(&w.attrs)
	w.val = append(w.val, ']')
	pt.Quantiles = w.str(w.val)
	st.Sums = append(st.Sums, pt)
	return nil
}

// quantile appends a ValueAtQuantile to the JSON array in w.val.
func (w *wireStager) quantile(b []byte) error {
	var q, v float64
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var u uint64
		switch num {
		case 1:
			u, pos, err = i64Field(b, p, wt)
			q = math.Float64frombits(u)
		case 2:
			u, pos, err = i64Field(b, p, wt)
			v = math.Float64frombits(u)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	if len(w.val) > 1 {
		w.val = append(w.val, ',')
	}
	w.val = append(w.val, `{"q":`...)
	w.val = appendJSONFloat(w.val, q)
	w.val = append(w.val, `,"v":`...)
	w.val = appendJSONFloat(w.val, v)
	w.val = append(w.val, '}')
	return nil
}

// checkExemplar checks an Exemplar, which the stage does not keep.
func (w *wireStager) checkExemplar(b []byte) error {
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		switch num {
		case 2, 3, 6:
			_, pos, err = i64Field(b, p, wt)
		case 4:
			_, pos, err = idField(b, p, wt, 8)
		case 5:
			_, pos, err = idField(b, p, wt, 16)
		case 7:
			var kv []byte
			if kv, pos, err = lenField(b, p, wt); err == nil {
				w.scratch, _, _, _, err = w.appendKV(w.scratch[:0], kv, 0)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
