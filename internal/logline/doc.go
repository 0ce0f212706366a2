// Package logline is the line format of `otelbench pipeline`: the writer
// appends lines that carry a stream id, a sequence number and their write
// time in nanoseconds, in one of three shapes (JSON, logfmt, plain text),
// and the sink parses them back out of whatever a log agent shipped.
//
//	json    {"time_ns":1765000000123456789,"stream":3,"seq":41,"level":"info","msg":"xxxx"}
//	logfmt  time_ns=1765000000123456789 stream=3 seq=41 level=info msg=xxxx
//	plain   1765000000123456789 3 41 INFO xxxx
//
// Parse accepts a line with or without its newline, and with a leading CRI
// container-log prefix ("2006-01-02T15:04:05.999999999Z stdout F "), which
// an agent that reads Kubernetes pod logs without a container parser ships
// as part of the body.
package logline
