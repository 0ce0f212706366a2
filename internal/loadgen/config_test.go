package loadgen

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/validtest"
)

func TestParseMix(t *testing.T) {
	tests := []struct {
		in   string
		want Mix
		ok   bool
	}{
		{"logs=1,metrics=1,traces=1", Mix{1, 1, 1}, true},
		{"traces=3", Mix{0, 0, 3}, true},
		{" logs = 2 , metrics=0 ", Mix{2, 0, 0}, true},
		{"logs=0", Mix{}, false},
		{"logs", Mix{}, false},
		{"events=1", Mix{}, false},
		{"logs=-1", Mix{}, false},
		{"logs=x", Mix{}, false},
		{"logs=1001", Mix{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMix(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseMix(%q) error %v, want ok=%v", tt.in, err, tt.ok)
			}
			if tt.ok && got != tt.want {
				t.Errorf("ParseMix(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestMixSchedule(t *testing.T) {
	tests := []struct {
		mix  Mix
		want []signal.Signal
	}{
		{Mix{1, 1, 1}, []signal.Signal{signal.Logs, signal.Metrics, signal.Traces}},
		{Mix{0, 0, 2}, []signal.Signal{signal.Traces, signal.Traces}},
		// Smooth: the heavy signal is spread out, not sent in one run.
		{Mix{3, 1, 0}, []signal.Signal{signal.Logs, signal.Logs, signal.Metrics, signal.Logs}},
		{Mix{2, 0, 1}, []signal.Signal{signal.Logs, signal.Traces, signal.Logs}},
	}
	for _, tt := range tests {
		t.Run(tt.mix.String(), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.mix.schedule()); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := ParseHeaders([]string{"Authorization=Bearer a=b", "X-Tenant: t1", "X-Tenant=t2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Authorization"); got != "Bearer a=b" {
		t.Errorf("Authorization = %q, want %q", got, "Bearer a=b")
	}
	if got := h.Values("X-Tenant"); len(got) != 2 {
		t.Errorf("X-Tenant = %v, want two values", got)
	}
	for _, bad := range []string{"novalue", "=v", "a b=c", "k=v\r\nX: y"} {
		if _, err := ParseHeaders([]string{bad}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("ParseHeaders(%q) = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	validtest.Run(t, []validtest.Case[Config]{
		{"zero", Config{}, nil},
		{"https endpoint", Config{Endpoint: "https://collector:4318"}, nil},
		{"no scheme", Config{Endpoint: "127.0.0.1:4318"}, nil},
		{"no host", Config{Endpoint: "http://"}, ErrInvalidConfig},
		{"per-signal endpoint", Config{SignalEndpoints: [3]string{"http://a:4318/logs"}}, nil},
		{"bad per-signal endpoint", Config{SignalEndpoints: [3]string{"ftp://a/logs"}}, ErrInvalidConfig},
		{"protocol json", Config{Protocol: ProtocolHTTPJSON}, nil},
		{"protocol grpc", Config{Protocol: ProtocolGRPC}, nil},
		{"protocol grpc, json", Config{Protocol: ProtocolGRPC, Payload: otlpgen.Config{Encoding: otlpgen.EncodingJSON}}, ErrInvalidConfig},
		{"unknown protocol", Config{Protocol: "thrift"}, ErrInvalidConfig},
		{"protocol and encoding disagree", Config{Protocol: ProtocolHTTPJSON, Payload: otlpgen.Config{Encoding: otlpgen.EncodingProto}}, ErrInvalidConfig},
		{"stages", Config{Stages: []Stage{{time.Second, 10}}}, nil},
		{"stages all zero", Config{Stages: []Stage{{time.Second, 0}}}, ErrInvalidConfig},
		{"epoll with stages", Config{Sender: SenderEpoll, Stages: []Stage{{time.Second, 10}}}, ErrInvalidConfig},
		{"grpc scheme", Config{Endpoint: "grpc://x:4317"}, ErrInvalidConfig},
		{"negative rate", Config{Rate: -1}, ErrInvalidConfig},
		{"negative concurrency", Config{Concurrency: -1}, ErrInvalidConfig},
		{"negative duration", Config{Duration: -1}, ErrInvalidConfig},
		{"negative requests", Config{Requests: -1}, ErrInvalidConfig},
		{"bad payload", Config{Payload: otlpgen.Config{Records: -1}}, ErrInvalidConfig},
		{"retry too large", Config{Retry: 1000}, ErrInvalidConfig},
		{"live times", Config{Times: TimesLive}, nil},
		{"live times, json", Config{Times: TimesLive, Payload: otlpgen.Config{Encoding: otlpgen.EncodingJSON}}, ErrInvalidConfig},
		{"live times, zstd", Config{Times: TimesLive, Payload: otlpgen.Config{Compression: otlpgen.CompressionZstd}}, nil},
		{"replayed times, gzip", Config{Times: TimesReplay, Payload: otlpgen.Config{Compression: otlpgen.CompressionGzip}}, nil},
		{"unknown times", Config{Times: "now"}, ErrInvalidConfig},
	})
}

// TestSplit: n shards of a config add up to it, with distinct seeds and random run ids.
func TestSplit(t *testing.T) {
	c := Config{Rate: 1000, Concurrency: 10, Connections: 4, Requests: 101, RunID: 7, Stages: []Stage{{time.Second, 300}},
		Payload: otlpgen.Config{Seed: 5}}
	var rate, stage float64
	var conc, conns int
	var reqs int64
	seeds := map[uint64]bool{}
	for i := range 3 {
		s := c.Split(i, 3)
		rate, stage, conc, reqs = rate+s.Rate, stage+s.Stages[0].Target, conc+s.Concurrency, reqs+s.Requests
		seeds[s.Payload.Seed] = true
		conns += s.Connections
		if s.RunID != 0 {
			t.Errorf("shard %d run id %d, want 0 (random per process)", i, s.RunID)
		}
	}
	if rate != 1000 || stage != 300 || conc != 10 || conns != 4 || reqs != 101 || len(seeds) != 3 {
		t.Errorf("shards sum to rate %v, stage %v, concurrency %d, connections %d, requests %d with %d seeds; want 1000, 300, 10, 4, 101, 3",
			rate, stage, conc, conns, reqs, len(seeds))
	}
	if c.Stages[0].Target != 300 {
		t.Error("Split changed the original's stages")
	}
}
