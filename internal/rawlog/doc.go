// Package rawlog is the projectors' side of the raw log: every appended OTLP request, stored
// whole in id order in segment files (internal/seglog) before anything is projected from it. A
// Reader returns the durable rows after a projector's high-water mark (Read), bounded in rows,
// records and bytes, with the payloads of the signals its Filter takes and the other rows without
// theirs, so the mark passes them. Rows come back as Row values, their payloads copied out of the
// segment reader's buffer, into the caller's arena when it gives one.
//
// The write side (the group-commit queue, the writer, the durable waiter and raw pruning) is
// still in internal/store (queue.go, writer.go, walsync.go, prune.go, totals.go), which writes
// the seglog.Log a Reader reads.
package rawlog
