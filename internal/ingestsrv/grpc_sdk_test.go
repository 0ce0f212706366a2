package ingestsrv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestGRPCSDKExporters sends with the OpenTelemetry Go SDK's own gRPC
// exporters (their defaults but for the endpoint) and finds every record
// stored and projected.
func TestGRPCSDKExporters(t *testing.T) {
	ts := startGRPCServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const spans, logs, series = 1500, 1500, 40

	texp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(ts.grpcAddr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp))
	tracer := tp.Tracer("otelbench-test")
	for i := range spans {
		_, span := tracer.Start(ctx, fmt.Sprintf("op-%d", i%7))
		span.End()
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("trace provider shutdown: %v", err)
	}

	lexp, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(ts.grpcAddr), otlploggrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(lexp)))
	logger := lp.Logger("otelbench-test")
	for i := range logs {
		var r otellog.Record
		r.SetBody(attribute.StringValue(fmt.Sprintf("line %d", i)))
		r.SetSeverity(otellog.SeverityInfo)
		logger.Emit(ctx, r)
	}
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatalf("logger provider shutdown: %v", err)
	}

	mexp, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(ts.grpcAddr), otlpmetricgrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	// One collection, at shutdown: a counter with `series` attribute sets
	// is `series` data points.
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp, sdkmetric.WithInterval(time.Hour))))
	counter, err := mp.Meter("otelbench-test").Int64Counter("requests")
	if err != nil {
		t.Fatal(err)
	}
	for i := range series {
		counter.Add(ctx, 1, metric.WithAttributes(attribute.Int("shard", i)))
	}
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatalf("meter provider shutdown: %v", err)
	}

	st := ts.Stats()
	for sig, want := range map[string]uint64{"traces": spans, "logs": logs, "metrics": series} {
		if got := st.Signals[sig].Records; got != want {
			t.Errorf("%s: %d records stored, want %d", sig, got, want)
		}
	}
	waitProjected(t, ts.Store())
	db := ts.Store().ReadDB()
	if got := count(t, db, "SELECT count(*) FROM spans"); got != spans {
		t.Errorf("%d spans projected, want %d", got, spans)
	}
	if got := count(t, db, "SELECT count(*) FROM logs"); got != logs {
		t.Errorf("%d logs projected, want %d", got, logs)
	}
	if got := count(t, db, "SELECT count(*) FROM number_points"); got != series {
		t.Errorf("%d number points projected, want %d", got, series)
	}
}

// TestGRPCSDKRetriesUnavailable spends the in-flight budget so that the
// SDK's trace exporter is answered UNAVAILABLE with RetryInfo, frees it
// after a while, and finds every span stored: the exporter retried.
func TestGRPCSDKRetriesUnavailable(t *testing.T) {
	ts := startGRPCServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	texp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(ts.grpcAddr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp))
	const spans = 300
	tr := tp.Tracer("otelbench-test")
	for i := range spans {
		_, span := tr.Start(ctx, fmt.Sprintf("op-%d", i))
		span.End()
	}
	ts.budget.used.Add(ts.budget.max)
	flushed := make(chan error, 1)
	go func() { flushed <- tp.ForceFlush(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	// The exporter backs off 5 s after the first refusal (its default retry
	// policy), and gives up on an export after 10 s: free the budget after
	// the first refusal.
	for ts.Stats().Transports[TransportGRPC].Rejections["queue_full"] < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	ts.budget.used.Add(-ts.budget.max)
	if err := <-flushed; err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	st := ts.Stats()
	if got := st.Transports[TransportGRPC].Rejections["queue_full"]; got < 1 {
		t.Errorf("%d UNAVAILABLE answers, want at least 1 (the test did not exercise the retry)", got)
	}
	if got := st.Signals["traces"].Records; got != spans {
		t.Errorf("%d spans stored, want %d", got, spans)
	}
}
