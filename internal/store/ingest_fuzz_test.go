package store

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/stage"
)

// projectedRecords counts the rows that raw row rawID became in the projected tables: log
// records, spans or data points, as ingest counts records.
func projectedRecords(t testing.TB, s *Store, sig signal.Signal, rawID int64) int {
	t.Helper()
	var q string
	switch sig {
	case signal.Logs:
		q = `SELECT count(*) FROM logs WHERE raw_id = ?1`
	case signal.Traces:
		q = `SELECT count(*) FROM spans WHERE raw_id = ?1`
	default:
		q = `SELECT (SELECT count(*) FROM number_points WHERE raw_id = ?1) + (SELECT count(*) FROM histogram_points WHERE raw_id = ?1)
			+ (SELECT count(*) FROM exp_histogram_points WHERE raw_id = ?1) + (SELECT count(*) FROM summary_points WHERE raw_id = ?1)`
	}
	var n int
	if err := s.ReadDB().QueryRow(q, rawID).Scan(&n); err != nil {
		t.Fatalf("count the rows of raw row %d: %v", rawID, err)
	}
	return n
}

// nestedJSONLogs is an OTLP/JSON logs request of one record whose body nests depth arrays.
func nestedJSONLogs(depth int) []byte {
	return []byte(`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"deep"}}]},` +
		`"scopeLogs":[{"logRecords":[{"timeUnixNano":"1700000000000000000","body":` +
		strings.Repeat(`{"arrayValue":{"values":[`, depth) + `{"stringValue":"bottom"}` + strings.Repeat(`]}}`, depth) +
		`}]}]}]}`)
}

// nestedJSONAttrs is an OTLP/JSON request of sig with one record whose attribute nests depth
// key-value lists.
func nestedJSONAttrs(sig signal.Signal, depth int) []byte {
	v := strings.Repeat(`{"kvlistValue":{"values":[{"key":"k","value":`, depth) + `{"intValue":"7"}` + strings.Repeat(`}]}}`, depth)
	attrs := `"attributes":[{"key":"nested","value":` + v + `}]`
	switch sig {
	case signal.Traces:
		return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10",` +
			`"spanId":"0102030405060708","name":"s","startTimeUnixNano":"1","endTimeUnixNano":"2",` + attrs + `}]}]}]}`)
	case signal.Metrics:
		return []byte(`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"m","gauge":{"dataPoints":[` +
			`{"timeUnixNano":"1","asDouble":1.5,` + attrs + `}]}}]}]}]}`)
	}
	return []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1",` + attrs + `}]}]}]}`)
}

// FuzzIngestedRecordsProject: whatever ingest's decoder (otlpcodec.Decode, protobuf or OTLP/JSON)
// accepts and the store appends, every record it counted becomes a row of the projected tables,
// and no raw row is left unprojectable. The store is a real one, shared by the inputs.
func FuzzIngestedRecordsProject(f *testing.F) {
	lm := logsMarshaler
	seedLogs, _ := lm.MarshalLogs(makeLogs("svc", "seed", 3))
	f.Add(uint8(signal.Logs), false, seedLogs)
	f.Add(uint8(signal.Traces), false, benchTraces(3))
	f.Add(uint8(signal.Metrics), false, benchMetrics(4))
	for _, depth := range []int{10, 49, 50, 60, 200} {
		f.Add(uint8(signal.Logs), true, nestedJSONLogs(depth))
		for _, sig := range signal.All() {
			f.Add(uint8(sig), true, nestedJSONAttrs(sig, depth))
		}
	}
	// A clock that never waits for real: each input is projected without the idle gather wait.
	s := openTest(f, Config{Sync: SyncOff, Clock: &stepClock{}, Logger: quietLogger})
	f.Fuzz(func(t *testing.T, sigByte uint8, json bool, body []byte) {
		sig := signal.Signal((int(sigByte)+2)%signal.Count + 1) // 1, 2, 3 as they are
		enc := otlpcodec.EncodingProto
		if json {
			enc = otlpcodec.EncodingJSON
		}
		req, err := otlpcodec.Decode(sig, enc, body, nil)
		if err != nil {
			return // answered 400: nothing was promised
		}
		before := s.Stats().Unprojectable
		if err := s.Append(context.Background(), sig, req.Payload, req.Records); err != nil {
			t.Fatalf("Append: %v", err)
		}
		rawID := s.Stats().LastRawID
		waitProjected(t, s)
		if got := projectedRecords(t, s, sig, rawID); got != req.Records {
			t.Errorf("%v (%v): %d records acknowledged, %d projected", sig, enc, req.Records, got)
		}
		if got := s.Stats().Unprojectable - before; got != 0 {
			t.Errorf("%d raw rows unprojectable, want 0", got)
		}
	})
}

// TestDeepValuesStoredAsStrings: a body nested past pdata's limit, acknowledged through
// OTLP/JSON, is projected with its levels above deepFlattenDepth as JSON structure and the rest
// as one JSON string holding their JSON, nothing left out.
func TestDeepValuesStoredAsStrings(t *testing.T) {
	s := openTest(t, Config{Logger: quietLogger})
	// Ingest refuses such a body (otlpcodec.ErrTooDeep); the store must still
	// project one that reaches it, say from a data directory written before
	// that check, so the payload is encoded here with pdata, which has no
	// depth limit of its own when it encodes.
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalJSON(nestedJSONLogs(60)); err != nil {
		t.Fatal(err)
	}
	payload, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), signal.Logs, payload, 1); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s)
	var body string
	if err := s.ReadDB().QueryRow(`SELECT body FROM logs`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	var outer any
	if err := json.Unmarshal([]byte(body), &outer); err != nil {
		t.Fatalf("body is no JSON: %v", err)
	}
	levels := 0
	for {
		a, ok := outer.([]any)
		if !ok {
			break
		}
		levels++
		outer = a[0]
	}
	inner, ok := outer.(string)
	if !ok || levels != stage.DeepFlattenDepth/2 {
		t.Fatalf("got %d levels of arrays above a %T, want %d above a string", levels, outer, stage.DeepFlattenDepth/2)
	}
	if want := strings.Repeat("[", 60-levels) + `"bottom"` + strings.Repeat("]", 60-levels); inner != want {
		t.Errorf("the deep part: got %q, want %q", inner, want)
	}
}
