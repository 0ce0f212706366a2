// Package rawlog is the raw log: every appended OTLP request, stored whole in id order in
// segment files (internal/seglog) before anything is projected from it. It owns:
//
//   - the write side: Log.Append puts a request on the group-commit queue (queue.go), bounded in
//     requests and bytes; one writer goroutine takes everything queued and writes it as one group
//     (writer.go); with seglog.SyncFull the durable waiter answers a group after the fdatasync
//     that covers it, while the writer writes the next (walsync.go). A failed fsync is final.
//   - pruning: the writer deletes whole segments once every row in them is projected durably
//     (Log.SetProjected, which the store calls) and past the retention (prune.go), and the
//     durable totals of what it stored, pruned.json included (totals.go);
//   - the projectors' side: a Reader returns the durable rows after a projector's high-water mark
//     (Read), bounded in rows, records and bytes, with the payloads of the signals its Filter
//     takes and the other rows without theirs, so the mark passes them (reader.go).
//
// Its owner (internal/store) gives it hooks instead of its internals: Config.OnDurable, called
// with each durable group before its appends are answered (the store wakes its projectors), and
// a Bound, the data directory's size bound (Append answers ErrDiskFull past it, and projected
// segments go at once whatever their age). Log.Stats holds its counters, which store.Stats copies.
package rawlog
