package stage

import (
	"github.com/otelbench/otelbench/internal/jsonstr"
	"github.com/otelbench/otelbench/internal/otlpwire"
	"github.com/otelbench/otelbench/internal/signal"
)

// Values nested past pdata's limit. pdata's protobuf decoder refuses an AnyValue nested
// otlpwire.RecursionLimit deep (50 levels of arrays or key-value lists), and so does the wire
// path, which follows it; but pdata's JSON decoder has no such limit, so an OTLP/JSON request
// that ingest decoded and acknowledged can carry values that the projector cannot decode from
// its protobuf copy. Rather than lose what was acknowledged, stageRow stages a payload pdata
// refused once more on the wire path with deepValues on: each value at deepFlattenDepth or
// deeper is stored as a JSON string holding its JSON, and the levels above it keep their
// structure (a body of 60 nested arrays reads [[...[ "[[...]]" ]...]]). A payload refused even
// so is unprojectable (project/unprojectable.go).

const (
	// deepFlattenDepth is the depth, as pdata counts it, from which a value is stored as a
	// string: a value's children are at most 3 levels deeper (a key-value list, its entry, the
	// entry's value), so the structured levels above it stay within pdata's limit.
	DeepFlattenDepth = otlpwire.RecursionLimit - 4
	// deepMaxDepth bounds the nesting rendered into such a string, and so the stack the
	// rendering takes (a few hundred bytes a level: ~1 MB at this bound); a payload nested deeper
	// stays unprojectable. Ingest, not this, is where such payloads belong refused.
	deepMaxDepth = 4096
)

// deepValues is the wire path's state for values nested past pdata's limit.
type deepValues struct {
	on     bool   // values at deepFlattenDepth or deeper become strings
	inside bool   // rendering such a value's JSON
	buf    []byte // that JSON
}

// limit is the depth at which the wire path refuses a payload.
func (d *deepValues) limit() int {
	if d.inside {
		return deepMaxDepth
	}
	return otlpwire.RecursionLimit
}

// at reports whether the value at depth is to be stored as a string.
func (d *deepValues) at(depth int) bool { return d.on && !d.inside && depth >= DeepFlattenDepth }

// appendDeep appends AnyValue b, at depth, as a JSON string holding the JSON that appendValue
// renders of it; it returns the kind of a string value.
func (w *wireStager) appendDeep(out, b []byte, depth int) ([]byte, int32, []byte, error) {
	start := len(out)
	w.deep.inside = true
	out, _, _, err := w.appendValue(out, b, depth)
	w.deep.inside = false
	if err != nil {
		return out, 0, nil, err
	}
	w.deep.buf = append(w.deep.buf[:0], out[start:]...)
	return jsonstr.Append(out[:start], bstr(w.deep.buf)), 1, nil, nil
}

// stageDeep stages payload, raw row rawID's, which pdata refused with pdataErr, on the wire path
// with values nested past pdata's limit stored as strings. It returns pdataErr, with st as it
// was, when the wire path refuses it all the same.
func (st *Stage) StageDeep(sig signal.Signal, rawID int64, payload []byte, pdataErr error) error {
	m := st.Mark()
	st.Wire.deep.on = true
	err := st.Wire.Stage(st, sig, rawID, payload)
	st.Wire.deep.on = false
	if err != nil {
		st.Rollback(m)
		return pdataErr
	}
	return nil
}
