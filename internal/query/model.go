package query

import "encoding/json"

// Log is one log record as the API returns it.
type Log struct {
	ID                   int64           `json:"id"`
	TimeUnixNano         int64           `json:"time_unix_nano"`
	ObservedTimeUnixNano int64           `json:"observed_time_unix_nano,omitempty"`
	SeverityNumber       int32           `json:"severity_number"`
	SeverityText         string          `json:"severity_text,omitempty"`
	Body                 string          `json:"body"`
	Service              string          `json:"service"`
	TraceID              string          `json:"trace_id,omitempty"`
	SpanID               string          `json:"span_id,omitempty"`
	Attributes           json.RawMessage `json:"attributes,omitempty"`
	// Resource is the attributes of the record's resource (service.name,
	// host.name, k8s.pod.name, ...).
	Resource json.RawMessage `json:"resource,omitempty"`

	resourceID int64
}

// LogPage is one page of newest-first logs; NextCursor is empty on the
// last page.
type LogPage struct {
	Logs       []Log  `json:"logs"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// RawJSON is JSON text stored by the store (attribute maps), emitted
// verbatim. It is a string so that it can share the memory of the row it
// was read from.
type RawJSON string

// MarshalJSON returns the stored JSON as is.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	return []byte(r), nil
}

// UnmarshalJSON keeps the raw JSON text.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	*r = RawJSON(b)
	return nil
}
