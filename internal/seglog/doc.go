// Package seglog is an append-only log of raw OTLP requests in segment files, the shape of
// Kafka's log, the Prometheus and Loki WALs and etcd's WAL: each payload is written once,
// sequentially, straight from the request's buffer; one fdatasync covers a group of requests;
// whole segments are deleted once their records are no longer needed.
//
// # Format
//
// A log is a directory of segment files named after their first id, zero-padded to 20 digits
// ("00000000000000000001.seg") so that names sort as ids. A segment starts with a 16-byte file
// header (magic "OTBSEG1\n", first id) followed by records, each a 32-byte header and its
// payload:
//
//	u32 payload length | u32 CRC-32C of the rest of the header and the payload |
//	u64 id | i64 received Unix ns | u32 records | u8 signal | 3 zero bytes | payload
//
// Integers are little-endian. Ids start at 1, increase by one from record to record and from
// segment to segment, and are never reused: not after a restart, and not after every record is
// deleted (an empty segment named after the next id keeps the count). Every group written is
// followed by an all-zero header (the end mark). A segment is allocated to Config.SegmentBytes
// before use, so an fdatasync need not commit a file-size change: a deleted segment kept as a
// spare ("<id>.spare", up to Config.Spares) and renamed into place with a new file header,
// whose blocks are written already; else a new file, fallocated (zero-filled where the
// filesystem cannot), into which the writer writes zeros a little ahead of the records. A recycled segment's stale records after the new ones are never valid:
// their ids, under the checksum, are below the segment's first (docs/design/seglog.md).
//
// # Durability
//
// The invariant: an id at or below Durable is on disk per Config.Sync and will be found, intact,
// by every later Open; Readers return nothing above it. With SyncFull (the default) the steps
// that keep it are:
//
//  1. Write (one goroutine) writes a group of records with one pwritev at the end of the active
//     segment and returns their ids; nothing is durable yet.
//  2. The syncer goroutine, woken by Write, notes the last id written, fdatasyncs the active
//     segment and only then raises Durable to that id and wakes WaitDurable. Meanwhile Write may
//     write the next group, which the next fdatasync covers: callers are answered after the
//     fsync that covers their record, and the writer's work overlaps the disk's.
//  3. A roll (the active segment reached Config.SegmentBytes) cuts the allocated rest off the
//     segment, fdatasyncs it, prepares and fdatasyncs the next segment (a spare's new file
//     header, or a new file) and fsyncs the directory after naming it, all before the new
//     segment's first record is written: only the last segment can have records that were
//     never fsynced.
//
// A failed fsync is final (PostgreSQL's "fsyncgate"): Linux may have dropped the pages it could
// not write, so a later successful fsync proves nothing. Every later Write and every WaitDurable
// above the mark fails with ErrSyncFailed until the log is reopened. A write that fails for lack
// of space (ErrDiskFull) is cut back off the file, uses no id, and the next Write tries again; a
// write that fails otherwise is final like a failed fsync.
//
// SyncNormal raises Durable as soon as a group is written (a process crash loses nothing; an OS
// crash or power loss may lose the last groups) and still fsyncs at rolls; SyncOff never fsyncs.
//
// # Recovery
//
// Open lists the segments and checks that their ids follow each other. Sealed segments are
// checked header by header (lengths chain to the end of the file, ids consecutive) without
// reading payloads; a defect there is corruption of fsynced data, and Open refuses it with
// ErrCorrupt naming the file and offset rather than drop records silently. Readers verify each
// payload's checksum as they return it. The last segment is verified in full: the records end
// at its first all-zero header (an end mark, or never-written space), or at its first other
// defect (short, bad checksum, wrong id: a torn tail, written after the last fsync and never
// acknowledged, or a recycled segment's older records). Every byte after that point is
// scrubbed to zeros, so that no record written there later can make a never-acknowledged one
// after it look whole again; the file keeps its allocated size. Open then fdatasyncs the last
// segment, since after a process crash whole records may sit in the page cache unsynced, and
// sets Durable to the last whole record.
//
// # Reading
//
// A Reader finds a record by the segments' first ids and a sparse in-memory index of each
// segment (an entry every Config.IndexBytes or Config.IndexRecords, rebuilt by Open's scan),
// then preads forward into a buffer of its own that its rows' payloads alias. Readers need no
// lock against the writer beyond a short copy of the segment's metadata, and any number may
// read at once.
//
// # Page cache
//
// With SyncFull the log gives back the page cache of durable records more than
// Config.CacheBytes behind the newest, and of sealed segments, and a Reader drops what it reads
// below that mark; a recycled segment's blocks ahead of the records are read in ahead of the
// writer (cache.go). Pages the kernel must find anew cost far more than pages just freed.
//
// # Deletion
//
// DeleteThrough removes whole segments, oldest first, whose every record is at or below the
// given id and durable; the caller guarantees those records are no longer needed (projected,
// past retention). Up to Config.Spares of them are kept as spares for the next rolls.
// Stats.DiskBytes counts segments and spares, for a size bound; ReleaseSpares removes the
// spares (a caller over its bound calls it), as does a write refused for lack of space. A
// Reader that has a deleted segment open reads on from its descriptor, and skips it once the
// file is recycled and overwritten.
package seglog
