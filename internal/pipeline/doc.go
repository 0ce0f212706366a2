// Package pipeline benchmarks a log agent end to end: files in, OTLP out,
// every line accounted for. It runs the three parts of `otelbench
// pipeline` together and writes one report:
//
//   - internal/logwriter writes the files the agent follows, at a paced
//     rate, every line carrying its stream, sequence number and write time;
//   - internal/linesink receives what the agent ships over OTLP/HTTP (count
//     only, or through the durable ingest server) and accounts for every
//     line: latency, missing, duplicates, out of order, unparseable;
//   - the agent itself, started from a command line (or attached by PID),
//     whose CPU time, peak RSS and open descriptors are read from /proc
//     while it runs, and optionally its syscalls per line through the BPF
//     profiler (internal/profile).
//
// The agent learns where to read and where to send through placeholders
// in its command line and in an optional config template: {dir} (the log
// directory), {endpoint} (the sink's base URL, http://{host}:{port}),
// {host} and {port} (for agents configured with them apart),
// {grpc_endpoint} (the sink's OTLP/gRPC address, host:port; the sink
// listens for both transports), {files} (the file count), {config} (the
// rendered template's path) and {work} (a scratch directory for agent
// state, removed afterwards).
package pipeline
