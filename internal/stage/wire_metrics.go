package stage

import (
	"math"

	"github.com/otelbench/otelbench/internal/otlpwire"
)

// Metric data fields (Metric's oneof), as stageMetric's type names.
var metricDataTypes = map[int32]string{
	5: metricGauge, 7: metricSum, 9: metricHistogram, 10: metricExpHistogram, 11: metricSummary,
}

// metric stages a Metric: its stream identity and its data points.
func (w *wireStager) metric(st *Stage, rawID int64, res, scope int, b []byte) error {
	var name, desc, unit, data []byte
	var dataField int32
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		switch num {
		case 1:
			name, pos, err = lenField(b, p, wt)
		case 2:
			desc, pos, err = lenField(b, p, wt)
		case 3:
			unit, pos, err = lenField(b, p, wt)
		case 5, 7, 9, 10, 11:
			if dataField != 0 {
				return errWire // pdata keeps the last, or merges
			}
			dataField = num
			data, pos, err = lenField(b, p, wt)
		case 12:
			var kv []byte
			if kv, pos, err = lenField(b, p, wt); err == nil {
				w.val, _, _, _, err = w.appendKV(w.val[:0], kv, 0)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	if dataField == 0 {
		return nil // no data: pdata's MetricTypeEmpty, which the stage skips
	}
	// The data message: its points (field 1), temporality (2) and, for a sum, monotonic (3).
	var temporality int64
	monotonic := false
	w.points = w.points[:0]
	for pos := 0; pos < len(data); {
		num, wt, p, err := otlpwire.ConsumeTag(data, pos)
		if err != nil {
			return err
		}
		var u uint64
		switch {
		case num == 1:
			var pt []byte
			pt, pos, err = lenField(data, p, wt)
			if w.Win.take() {
				w.points = append(w.points, pt)
			}
		case num == 2 && dataField != 5 && dataField != 11:
			u, pos, err = varintField(data, p, wt)
			temporality = int64(int32(u))
		case num == 3 && dataField == 7:
			u, pos, err = varintField(data, p, wt)
			monotonic = u != 0
		default:
			pos, err = otlpwire.ConsumeUnknown(data, p, wt)
		}
		if err != nil {
			return err
		}
	}
	id := st.stageMetric(res, scope, bstr(name), bstr(desc), bstr(unit), metricDataTypes[dataField], temporality, monotonic)
	for _, pt := range w.points {
		var err error
		switch dataField {
		case 5, 7:
			err = w.numberPoint(st, id, rawID, pt)
		case 9:
			err = w.histPoint(st, id, rawID, pt)
		case 10:
			err = w.expHistPoint(st, id, rawID, pt)
		case 11:
			err = w.summaryPoint(st, id, rawID, pt)
		}
		if err != nil {
			return err
		}
	}
	if w.Win.Cut {
		return errWindowEnd // the rest is past the window
	}
	return nil
}

// pointField reads the fields every data point has: attributes (field attrs), start time (2),
// time (3) and flags (flags). ok false: num is none of them.
func (w *wireStager) pointField(h *pointHead, b []byte, num int32, wt uint8, p int, attrs, flags int32) (pos int, ok bool, err error) {
	var u uint64
	switch num {
	case attrs:
		var v []byte
		if v, pos, err = lenField(b, p, wt); err == nil {
			err = w.attr(&w.attrs, v)
		}
	case 2:
		u, pos, err = i64Field(b, p, wt)
		h.Start = int64(u)
	case 3:
		u, pos, err = i64Field(b, p, wt)
		h.Time = int64(u)
	case flags:
		u, pos, err = varintField(b, p, wt)
		h.Flags = int64(uint32(u))
	default:
		return p, false, nil
	}
	return pos, true, err
}

func (w *wireStager) numberPoint(st *Stage, metric int, rawID int64, b []byte) error {
	pt := NumberPoint{pointHead: pointHead{Metric: metric, RawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
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
			pt.Vint, pt.Vdouble = nil, math.Float64frombits(u)
		case 6:
			u, pos, err = i64Field(b, p, wt)
			pt.Vint, pt.Vdouble = int64(u), nil
		case 5:
			var v []byte
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
	st.Numbers = append(st.Numbers, pt)
	return nil
}

// optI64 is an optional double's value for a row: the float, or nil (SQL NULL) when absent.
func optI64(has bool, u uint64) any {
	if !has {
		return nil
	}
	return math.Float64frombits(u)
}

func (w *wireStager) histPoint(st *Stage, metric int, rawID int64, b []byte) error {
	pt := HistPoint{pointHead: pointHead{Metric: metric, RawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	w.u64, w.f64 = w.u64[:0], w.f64[:0]
	var sum, mn, mx uint64
	var hasSum, hasMin, hasMax bool
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var ok bool
		if pos, ok, err = w.pointField(&pt.pointHead, b, num, wt, p, 9, 10); ok {
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
			sum, pos, err = i64Field(b, p, wt)
			hasSum = true
		case 11:
			mn, pos, err = i64Field(b, p, wt)
			hasMin = true
		case 12:
			mx, pos, err = i64Field(b, p, wt)
			hasMax = true
		case 6:
			pos, err = fixed64s(&w.u64, b, p, wt, func(u uint64) uint64 { return u })
		case 7:
			pos, err = fixed64s(&w.f64, b, p, wt, math.Float64frombits)
		case 8:
			var v []byte
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
	pt.Buckets = st.json(func(b []byte) []byte { return appendJSONUint64s(b, w.u64) })
	pt.Bounds = st.json(func(b []byte) []byte { return appendJSONFloat64s(b, w.f64) })
	st.Hists = append(st.Hists, pt)
	return nil
}

// fixed64s reads a repeated fixed64 or double field at pos into *dst as pdata does: a packed
// run replaces what came before, a single value is appended.
func fixed64s[T any](dst *[]T, b []byte, pos int, wt uint8, conv func(uint64) T) (int, error) {
	switch wt {
	case otlpwire.Len:
		v, end, err := otlpwire.ConsumeBytes(b, pos)
		if err != nil {
			return 0, err
		}
		if len(v)%8 != 0 {
			return 0, errWire
		}
		*dst = (*dst)[:0]
		for i := 0; i < len(v); i += 8 {
			u, _, _ := otlpwire.ConsumeFixed64(v, i)
			*dst = append(*dst, conv(u))
		}
		return end, nil
	case otlpwire.I64:
		u, end, err := otlpwire.ConsumeFixed64(b, pos)
		if err != nil {
			return 0, err
		}
		*dst = append(*dst, conv(u))
		return end, nil
	}
	return 0, errWire
}
