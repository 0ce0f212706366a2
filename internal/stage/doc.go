// Package stage turns raw OTLP payloads into the rows of one projection slice, without SQL:
// Stage holds a slice's resources, scopes, metrics, logs, spans (with events and links) and
// metric points, each row numbered and referring to the slice-local tables by index, plus what
// the projector's committing thread only inserts: the trace_chunks values (chunks.go, through
// internal/tracechunk) and the log_text documents (textdocs.go, textgrams.go).
//
// A payload is staged from its bytes by the wire path (wire*.go, internal/otlpwire), or by
// pdata where the wire path refuses it (stage.go, pdata_metrics.go); a value nested past
// pdata's depth limit is flattened to a JSON string (deepvalue.go). The resource cache
// (rescache.go) keeps decoded resources across slices by their bytes. A record window
// (recordwindow.go) stages a huge payload a window at a time. jsonenc.go is the one AnyValue →
// JSON encoder of the stored rows; arena.go the byte arena a slice's strings live in.
//
// The projector (internal/store) reads the raw rows, calls the stage, and commits its rows.
package stage
