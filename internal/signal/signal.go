package signal

import "fmt"

// Signal is an OTLP signal type. The zero value is invalid.
type Signal uint8

// The three OTLP signals, in the order reports list them. The values are
// stored on disk (raw.signal): do not renumber.
const (
	Logs    Signal = 1
	Metrics Signal = 2
	Traces  Signal = 3
)

// Count is the number of valid signals, the length of arrays indexed by
// Signal.Index.
const Count = 3

// All returns the valid signals in order.
func All() [Count]Signal { return [Count]Signal{Logs, Metrics, Traces} }

// String returns "logs", "metrics" or "traces", and "Signal(n)" for an
// invalid value.
func (s Signal) String() string {
	if !s.Valid() {
		return fmt.Sprintf("Signal(%d)", uint8(s))
	}
	return Pick(s, "logs", "metrics", "traces")
}

// Valid reports whether s is one of the three signals.
func (s Signal) Valid() bool { return s >= Logs && s <= Traces }

// Index returns the position of s in All (0 for Logs), the index of s in an
// array of length Count. It is out of range for an invalid s.
func (s Signal) Index() int { return int(s) - 1 }

// Path returns the OTLP/HTTP path of s, e.g. "/v1/logs".
func (s Signal) Path() string { return "/v1/" + s.String() }

// Pick returns whichever of logs, metrics and traces s names, and the zero T for an invalid s:
// one three-way choice for every per-signal table (service names, wire messages, nouns).
func Pick[T any](s Signal, logs, metrics, traces T) T {
	switch s {
	case Logs:
		return logs
	case Metrics:
		return metrics
	case Traces:
		return traces
	}
	var zero T
	return zero
}

// Parse parses "logs", "metrics" or "traces".
func Parse(name string) (Signal, error) {
	for _, s := range All() {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown signal %q (want logs, metrics or traces)", name)
}
