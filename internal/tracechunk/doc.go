// Package tracechunk owns the format of trace_chunks.packed: the spans of one trace, packed
// by the projector (Encoder) so that a trace is read with a few row fetches instead of one
// per span, and unpacked by queries (Decode) straight into columns.
//
// A packed value is: a version byte (Version); a string table (uvarint count, then each
// entry as uvarint length and bytes; index 0 is ""); a resource table (uvarint count, then
// each resource's 16-byte resources.hash); the trace's base start time (varint, Unix
// nanoseconds); the span count (uvarint); then per span, in spans.id order, its span and
// parent ids (8 bytes big-endian each, 0 for none), start minus base and end minus start
// (varints), kind and status code (uvarints), the string-table indexes of its service, name
// and status message and the resource-table index of its resource (uvarints), and its
// attributes JSON (uvarint length and bytes, empty for an empty map).
//
// The resource is named by its hash, not by resources.id, because the stager packs a slice's
// chunks before the committing thread has given its new resources their ids; the hash is
// what resources is keyed by, in telemetry.db and traces.db alike.
package tracechunk
