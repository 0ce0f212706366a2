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

// pointReader reads a data point's fields. Next takes the fields every data point has itself
// (attributes at field attrs, start time 2, time 3, flags at field flags) into the point's head,
// and stops at the point type's own; finish checks the read and sets the point's head. The head
// is held by value: a pointer into the point would move every point to the heap.
type pointReader struct {
	otlpwire.Reader
	w            *wireStager
	head         pointHead
	attrs, flags int32
	err          error
}

func (w *wireStager) pointReader(metric int, rawID int64, msg *otlpwire.Message, b []byte, attrs, flags int32) pointReader {
	w.attrs = append(w.attrs[:0], '{')
	return pointReader{Reader: otlpwire.NewReader(msg, b), w: w, head: pointHead{Metric: metric, RawID: rawID},
		attrs: attrs, flags: flags}
}

// Next advances to the next field that is not one of every point's.
func (p *pointReader) Next() bool {
	for p.Reader.Next() {
		switch p.Num {
		case p.attrs:
			p.err = p.w.attr(&p.w.attrs, p.Bytes())
		case 2:
			p.head.Start = int64(p.U)
		case 3:
			p.head.Time = int64(p.U)
		case p.flags:
			p.head.Flags = int64(uint32(p.U))
		default:
			return true
		}
		if p.err != nil {
			return false
		}
	}
	return false
}

// finish returns the first error of the read, or sets *h to the point's head.
func (p *pointReader) finish(h *pointHead) error {
	if p.err != nil {
		return p.err
	}
	if err := p.Reader.Err(); err != nil {
		return err
	}
	*h = p.head
	h.Attrs = p.w.attrsString(&p.w.attrs)
	return nil
}

func (w *wireStager) numberPoint(st *Stage, metric int, rawID int64, b []byte) error {
	var pt NumberPoint
	r := w.pointReader(metric, rawID, &otlpwire.NumberPoint, b, 7, 8)
	for r.Next() {
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
	if err := r.finish(&pt.pointHead); err != nil {
		return err
	}
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
	var pt HistPoint
	w.u64, w.f64 = w.u64[:0], w.f64[:0]
	var stats histStats
	r := w.pointReader(metric, rawID, &otlpwire.HistogramPoint, b, 9, 10)
	for r.Next() {
		if stats.field(&r.Reader, 5, 11, 12) {
			continue
		}
		switch r.Num {
		case 4:
			pt.Count = int64(r.U)
		case 6:
			fixed64s(&w.u64, &r.Reader, func(u uint64) uint64 { return u })
		case 7:
			fixed64s(&w.f64, &r.Reader, math.Float64frombits)
		case 8:
			if err := w.checkExemplar(r.Bytes()); err != nil {
				return err
			}
		}
	}
	if err := r.finish(&pt.pointHead); err != nil {
		return err
	}
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
