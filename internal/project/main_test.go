package project

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelbench/otelbench/internal/storetest"
)

// The OTLP requests the tests stage (internal/storetest).
var (
	makeLogs, makeTraces, makeMetrics    = storetest.Logs, storetest.Traces, storetest.Metrics
	benchLogs, benchTraces, benchMetrics = storetest.LogsRequest, storetest.TracesRequest, storetest.MetricsRequest
	logsMarshaler                        plog.ProtoMarshaler
)
