// Package rawlog is the projectors' side of the raw log, raw.db: every appended OTLP request,
// stored whole in id order before anything is projected from it. A Reader returns the durable
// rows after a projector's high-water mark (Read), bounded in rows, records and bytes, with the
// payloads of the signals its Filter takes and the other rows without theirs, so the mark passes
// them. Rows come back as Row values; nothing in this API names SQL, so the raw log's storage can
// change under the projectors.
//
// The write side (the group-commit queue, the writer, the WAL syncer and raw pruning) is still
// in internal/store (queue.go, writer.go, walsync.go, prune.go), which advances the durable
// high-water mark a Reader reads up to.
package rawlog
