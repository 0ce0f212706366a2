// Package linesink is the receiving half of `otelbench pipeline`: it takes
// the OTLP logs requests a log agent ships, reads every log record's body
// back into the (stream, sequence, write time) the writer put in the line
// (internal/logline), and accounts for every line: per stream, the lines
// received, the distinct ones, duplicates, lines that arrived after a later
// line of their stream (out of order), and an HDR histogram of end-to-end
// latency, write to receipt. Missing lines are what the writer wrote and
// the sink never saw.
//
// Handler is the accounting-only OTLP/HTTP receiver (`--sink count`), and
// GRPCServer its OTLP/gRPC twin: they answer 200 (OK) once a request is
// accounted for. Tap wraps another OTLP/HTTP
// handler (the durable ingest server, `--sink serve`) and accounts for a
// request only when that handler answered 2xx, that is when the lines are
// durable: receipt time is acknowledgement time; AckGRPC does the same for
// the ingest server's gRPC serving (ingestsrv.Server.GRPCServer).
//
// Record bodies are walked in the protobuf wire format without building
// pdata objects (internal/otlpwire), so the sink's cost per line stays a
// small fraction of an agent's; JSON bodies go through pdata.
package linesink
