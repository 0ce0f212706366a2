// Package logwriter writes the log files a log agent under test follows:
// Files streams at a total Rate of lines per second, paced as an open model
// by loadgen's Pacer (line n is due at start + n/Rate, whatever the disk or
// the agent do), each line in the logline format carrying its stream, its
// sequence number and its write time.
//
// Lines are written in batches: the writer wakes every Interval, appends
// every line that has come due to its file's buffer and issues one write(2)
// per file, stamping the lines with the time of that write. At 50,000
// lines/s this keeps the writer to about 1,000 wake-ups and a few thousand
// writes a second instead of 50,000 (docs/pipeline.md, "harness cost").
//
// Files rotate every RotateEvery, by rename (the file moves to NAME.1 and a
// new one is created) or by copytruncate (NAME is copied to NAME.1 and
// truncated in place), keeping Keep rotated files. The Kubernetes layout
// writes /var/log/pods/<ns>_<pod>_<uid>/<container>/0.log under Dir, with
// CRI-prefixed lines and /var/log/containers-style symlinks.
package logwriter
