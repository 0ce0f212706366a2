package project

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelbench/otelbench/internal/otlptest"
)

// The OTLP requests the tests stage (internal/otlptest).
var (
	makeLogs, makeTraces, makeMetrics    = otlptest.Logs, otlptest.Traces, otlptest.Metrics
	benchLogs, benchTraces, benchMetrics = otlptest.LogsRequest, otlptest.TracesRequest, otlptest.MetricsRequest
	logsMarshaler                        plog.ProtoMarshaler
)
