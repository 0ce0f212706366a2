// Command otelbench profiles and benchmarks telemetry pipelines: it serves a
// durable OTLP ingest target, loads it, compares two versions of it and
// profiles the syscalls that burn CPU.
package main

import "github.com/otelbench/otelbench/internal/exitcode"

func main() { exitcode.Main("otelbench", newRootCmd().ExecuteContext) }
