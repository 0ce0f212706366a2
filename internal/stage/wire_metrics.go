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
	var dataMsg *otlpwire.Message
	r := otlpwire.NewReader(&otlpwire.Metric, b)
	for r.Next() {
		switch r.Num {
		case 1:
			name = r.Bytes()
		case 2:
			desc = r.Bytes()
		case 3:
			unit = r.Bytes()
		case 5, 7, 9, 10, 11:
			if dataField != 0 {
				return errWire // pdata keeps the last, or merges
			}
			dataField, dataMsg, data = r.Num, r.Msg(), r.Bytes()
		case 12:
			var err error
			if w.val, _, _, _, err = w.appendKV(w.val[:0], r.Bytes(), 0); err != nil {
				return err
			}
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if dataField == 0 {
		return nil // no data: pdata's MetricTypeEmpty, which the stage skips
	}
	// The data message: its points (field 1), temporality (2) and, for a sum, monotonic (3).
	var temporality int64
	monotonic := false
	w.points = w.points[:0]
	r = otlpwire.NewReader(dataMsg, data)
	for r.Next() {
		if r.Kind == otlpwire.KUnknown {
			continue // a gauge's or summary's field 2, a field 3 but a sum's
		}
		switch r.Num {
		case 1:
			if w.Win.take() {
				w.points = append(w.points, r.Bytes())
			}
		case 2:
			temporality = int64(int32(r.U))
		case 3:
			monotonic = r.U != 0
		}
	}
	if err := r.Err(); err != nil {
		return err
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
// time (3) and flags (flags). ok false: the field is none of them.
func (w *wireStager) pointField(h *pointHead, f *otlpwire.Reader, attrs, flags int32) (ok bool, err error) {
	switch f.Num {
	case attrs:
		err = w.attr(&w.attrs, f.Bytes())
	case 2:
		h.Start = int64(f.U)
	case 3:
		h.Time = int64(f.U)
	case flags:
		h.Flags = int64(uint32(f.U))
	default:
		return false, nil
	}
	return true, err
}

func (w *wireStager) numberPoint(st *Stage, metric int, rawID int64, b []byte) error {
	pt := NumberPoint{pointHead: pointHead{Metric: metric, RawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	r := otlpwire.NewReader(&otlpwire.NumberPoint, b)
	for r.Next() {
		if ok, err := w.pointField(&pt.pointHead, &r, 7, 8); ok {
			if err != nil {
				return err
			}
			continue
		}
		switch r.Num {
		case 4:
			pt.Vint, pt.Vdouble = nil, math.Float64frombits(r.U)
		case 6:
			pt.Vint, pt.Vdouble = int64(r.U), nil
		case 5:
			if err := w.checkExemplar(r.Bytes()); err != nil {
				return err
			}
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	pt.Attrs = w.attrsString(&w.attrs)
	st.Numbers = append(st.Numbers, pt)
	return nil
}

// histStats is a histogram point's optional sum, min and max (doubles), as read off the wire.
type histStats struct {
	sum, min, max          uint64
	hasSum, hasMin, hasMax bool
}

// field reads f if it is the sum, the min or the max (fields sumNum, minNum and maxNum of the
// point's message) and says whether it was.
func (h *histStats) field(f *otlpwire.Reader, sumNum, minNum, maxNum int32) bool {
	switch f.Num {
	case sumNum:
		h.sum, h.hasSum = f.U, true
	case minNum:
		h.min, h.hasMin = f.U, true
	case maxNum:
		h.max, h.hasMax = f.U, true
	default:
		return false
	}
	return true
}

// values returns the sum, min and max for a row: each a float, or nil (SQL NULL) when absent.
func (h *histStats) values() (sum, min, max any) {
	return optF64(h.hasSum, h.sum), optF64(h.hasMin, h.min), optF64(h.hasMax, h.max)
}

// optF64 is an optional double's value for a row: the float, or nil (SQL NULL) when absent.
func optF64(has bool, u uint64) any {
	if !has {
		return nil
	}
	return math.Float64frombits(u)
}

func (w *wireStager) histPoint(st *Stage, metric int, rawID int64, b []byte) error {
	pt := HistPoint{pointHead: pointHead{Metric: metric, RawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	w.u64, w.f64 = w.u64[:0], w.f64[:0]
	var stats histStats
	r := otlpwire.NewReader(&otlpwire.HistogramPoint, b)
	for r.Next() {
		if ok, err := w.pointField(&pt.pointHead, &r, 9, 10); ok {
			if err != nil {
				return err
			}
			continue
		}
		if stats.field(&r, 5, 11, 12) {
			continue
		}
		switch r.Num {
		case 4:
			pt.Count = int64(r.U)
		case 6:
			fixed64s(&w.u64, &r, func(u uint64) uint64 { return u })
		case 7:
			fixed64s(&w.f64, &r, math.Float64frombits)
		case 8:
			if err := w.checkExemplar(r.Bytes()); err != nil {
				return err
			}
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	pt.Attrs = w.attrsString(&w.attrs)
	pt.Sum, pt.Min, pt.Max = stats.values()
	pt.Buckets = st.json(func(b []byte) []byte { return appendJSONUint64s(b, w.u64) })
	pt.Bounds = st.json(func(b []byte) []byte { return appendJSONFloat64s(b, w.f64) })
	st.Hists = append(st.Hists, pt)
	return nil
}

// fixed64s reads f, a repeated fixed64 or double field, into *dst as pdata does: a packed run
// (its length already checked whole) replaces what came before, a single value is appended.
func fixed64s[T any](dst *[]T, f *otlpwire.Reader, conv func(uint64) T) {
	if f.Wire == otlpwire.I64 {
		*dst = append(*dst, conv(f.U))
		return
	}
	*dst = (*dst)[:0]
	for i := 0; i < len(f.Bytes()); i += 8 {
		u, _, _ := otlpwire.ConsumeFixed64(f.Bytes(), i)
		*dst = append(*dst, conv(u))
	}
}
