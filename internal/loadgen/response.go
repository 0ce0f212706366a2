package loadgen

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/signal"
)

// parseRejected decodes an Export*ServiceResponse body of sig in the
// encoding its content type names, and returns the partial_success count of
// rejected records (rejected_log_records, rejected_data_points or
// rejected_spans). An empty body means nothing was rejected.
func parseRejected(sig signal.Signal, contentType string, body []byte) (int64, error) {
	if len(body) == 0 {
		return 0, nil
	}
	json := isJSON(contentType)
	un := func(j, p func([]byte) error) error {
		if json {
			return j(body)
		}
		return p(body)
	}
	switch sig {
	case signal.Logs:
		r := plogotlp.NewExportResponse()
		if err := un(r.UnmarshalJSON, r.UnmarshalProto); err != nil {
			return 0, fmt.Errorf("decode logs response: %w", err)
		}
		return r.PartialSuccess().RejectedLogRecords(), nil
	case signal.Metrics:
		r := pmetricotlp.NewExportResponse()
		if err := un(r.UnmarshalJSON, r.UnmarshalProto); err != nil {
			return 0, fmt.Errorf("decode metrics response: %w", err)
		}
		return r.PartialSuccess().RejectedDataPoints(), nil
	case signal.Traces:
		r := ptraceotlp.NewExportResponse()
		if err := un(r.UnmarshalJSON, r.UnmarshalProto); err != nil {
			return 0, fmt.Errorf("decode traces response: %w", err)
		}
		return r.PartialSuccess().RejectedSpans(), nil
	}
	return 0, fmt.Errorf("unknown signal %d", sig)
}

func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// retryable reports whether OTLP/HTTP allows retrying a response status.
func retryable(status int) bool {
	return status == 429 || status == 502 || status == 503 || status == 504
}

// retryDelay returns the wait before retry number n (from 0): the
// Retry-After header (delay-seconds or HTTP-date) if present, otherwise
// exponential backoff from 100 ms; always at most maxWait.
func retryDelay(retryAfter string, n int, now time.Time, maxWait time.Duration) time.Duration {
	d := (100 * time.Millisecond) << min(n, 16)
	if retryAfter != "" {
		if secs, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && secs >= 0 {
			d = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(retryAfter); err == nil {
			d = max(t.Sub(now), 0)
		}
	}
	return min(d, maxWait)
}
