package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
)

// LoadSchema is the schema tag of the `otelbench load --json` report; LoadSchemaV1 is the
// previous version, whose fields compare reads are the same.
const (
	LoadSchema   = "otelbench.load/v2"
	LoadSchemaV1 = "otelbench.load/v1"
)

// loadReport is the part of the "otelbench.load/v2" (or v1) report compare reads.
type loadReport struct {
	Schema          string     `json:"schema"`
	DurationSeconds float64    `json:"duration_seconds"`
	Totals          loadTotals `json:"totals"`
}

type loadTotals struct {
	Requests          float64            `json:"requests"`
	Status            map[string]float64 `json:"status"`
	TransportErrors   float64            `json:"transport_errors"`
	RecordsSent       float64            `json:"records_sent"`
	RecordsAcked      float64            `json:"records_acked"`
	RequestsPerSecond float64            `json:"requests_per_second"`
	RecordsPerSecond  float64            `json:"records_per_second"`
	LatencyMS         struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"latency_ms"`
}

// loadResult is what one load run contributes to a round.
type loadResult struct {
	Requests          float64
	RequestsPerSecond float64
	RecordsPerSecond  float64
	P50, P99          float64 // seconds
	// Errors counts requests not answered 2xx: other statuses plus
	// transport errors.
	Errors float64
}

// parseLoadReport decodes an "otelbench.load/v2" or v1 report.
func parseLoadReport(b []byte) (loadResult, error) {
	var r loadReport
	if err := json.Unmarshal(b, &r); err != nil {
		return loadResult{}, fmt.Errorf("decode load report: %w", err)
	}
	if r.Schema != LoadSchema && r.Schema != LoadSchemaV1 {
		return loadResult{}, fmt.Errorf("decode load report: schema %q, want %q or %q", r.Schema, LoadSchema, LoadSchemaV1)
	}
	t := r.Totals
	res := loadResult{
		Requests:          t.Requests,
		RequestsPerSecond: t.RequestsPerSecond,
		RecordsPerSecond:  t.RecordsPerSecond,
		P50:               t.LatencyMS.P50 / 1e3,
		P99:               t.LatencyMS.P99 / 1e3,
		Errors:            t.TransportErrors,
	}
	for k, v := range t.Status {
		if k != "2xx" {
			res.Errors += v
		}
	}
	for _, v := range []float64{res.Requests, res.RequestsPerSecond, res.RecordsPerSecond, res.P50, res.P99, res.Errors} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return loadResult{}, fmt.Errorf("decode load report: bad value %v", v)
		}
	}
	return res, nil
}

// LoadError reports a load run that produced no usable report.
type LoadError struct {
	Side   string
	Err    error
	Output string
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("load %s: %v\n%s", e.Side, e.Err, e.Output)
}

func (e *LoadError) Unwrap() error { return e.Err }

// loadArgs returns the argv of one load run against addr.
func loadArgs(bin, addr, jsonPath string, extra []string) []string {
	args := []string{bin, "load", "--endpoint", "http://" + addr, "--json", jsonPath, "--no-progress"}
	return append(args, extra...)
}

// checkLoadArgs rejects --load flags that compare sets itself.
func checkLoadArgs(extra []string) error {
	for _, a := range extra {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--endpoint", "--json", "--no-progress":
			return fmt.Errorf("--load: %s is set by compare", name)
		}
	}
	return nil
}

// runLoad runs the load binary and reads its JSON report. A load that exits
// non-zero but wrote a report (say --max-error-rate tripped) still counts:
// its errors are a metric; a load that wrote no report is a run error.
func runLoad(ctx context.Context, argv []string, jsonPath, side string) (loadResult, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out := &tailBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return loadResult{}, ctx.Err()
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return loadResult{}, &LoadError{Side: side, Err: errors.Join(runErr, err), Output: out.String()}
	}
	res, err := parseLoadReport(b)
	if err != nil {
		return loadResult{}, &LoadError{Side: side, Err: errors.Join(runErr, err), Output: out.String()}
	}
	if res.Requests == 0 {
		return loadResult{}, &LoadError{Side: side, Err: errors.Join(runErr, errors.New("load sent no requests")), Output: out.String()}
	}
	return res, nil
}
