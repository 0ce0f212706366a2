package loadgen

import "time"

// Shard says which part of a load spread over several machines a report
// covers, and when that part really started; docs/distributed-load.md.
type Shard struct {
	// Index counts from 0; Count is the number of shards of the whole load.
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is the wall-clock start the shard was asked to wait for
	// (--start-at, --start-in); absent when it started at once.
	StartAt *time.Time `json:"start_at,omitempty"`
	// FirstSend is the time of the shard's first send, on this host's clock.
	FirstSend time.Time `json:"first_send"`
	// ClockOffset estimates how far the target's clock is ahead of this
	// host's; absent when no estimate could be made.
	ClockOffset *ClockOffset `json:"clock_offset,omitempty"`
	// Host names the machine (the pod name on Kubernetes).
	Host string `json:"host,omitempty"`
}

// ClockOffset is an estimate of (target clock − host clock): the target's
// time is the host's plus Seconds, within ±UncertaintySeconds.
type ClockOffset struct {
	Seconds            float64 `json:"seconds"`
	UncertaintySeconds float64 `json:"uncertainty_seconds"`
	Source             string  `json:"source"` // how it was measured, e.g. "http-date"
	Samples            int     `json:"samples"`
}
