package signal

import "testing"

func TestSignals(t *testing.T) {
	tests := []struct {
		sig   Signal
		value uint8 // stored in raw.signal: must never change
		name  string
		path  string
		index int
	}{
		{Logs, 1, "logs", "/v1/logs", 0},
		{Metrics, 2, "metrics", "/v1/metrics", 1},
		{Traces, 3, "traces", "/v1/traces", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := uint8(tt.sig); got != tt.value {
				t.Errorf("value: got %d, want %d", got, tt.value)
			}
			if got := tt.sig.String(); got != tt.name {
				t.Errorf("String: got %q, want %q", got, tt.name)
			}
			if got := tt.sig.Path(); got != tt.path {
				t.Errorf("Path: got %q, want %q", got, tt.path)
			}
			if got := tt.sig.Index(); got != tt.index {
				t.Errorf("Index: got %d, want %d", got, tt.index)
			}
			if got := All()[tt.sig.Index()]; got != tt.sig {
				t.Errorf("All()[Index]: got %v, want %v", got, tt.sig)
			}
			if !tt.sig.Valid() {
				t.Errorf("Valid: got false, want true")
			}
			got, err := Parse(tt.name)
			if err != nil || got != tt.sig {
				t.Errorf("Parse(%q): got %v, %v, want %v, nil", tt.name, got, err, tt.sig)
			}
		})
	}
}

func TestInvalid(t *testing.T) {
	for _, s := range []Signal{0, 4, 255} {
		if s.Valid() {
			t.Errorf("Signal(%d).Valid: got true, want false", uint8(s))
		}
	}
	if got, want := Signal(0).String(), "Signal(0)"; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
	var zero Signal
	if zero.Valid() {
		t.Error("zero Signal is valid, want invalid")
	}
}

func TestParseError(t *testing.T) {
	for _, name := range []string{"", "log", "Logs", " logs", "spans", "Signal(0)"} {
		if s, err := Parse(name); err == nil {
			t.Errorf("Parse(%q): got %v, nil, want an error", name, s)
		}
	}
}

func TestPick(t *testing.T) {
	for s, want := range map[Signal]int{Logs: 10, Metrics: 20, Traces: 30} {
		if got := Pick(s, 10, 20, 30); got != want {
			t.Errorf("Pick(%d) = %d, want %d", uint8(s), got, want)
		}
	}
	if got := Pick(Signal(0), 1, 2, 3); got != 0 {
		t.Errorf("Pick of an invalid signal = %d, want the zero value", got)
	}
}
