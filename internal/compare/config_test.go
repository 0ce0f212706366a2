package compare

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // "" for valid
	}{
		{"refs", Config{Base: "main", Head: "HEAD"}, ""},
		{"self-check", Config{Base: "HEAD", SelfCheck: true}, ""},
		{"self-check with head", Config{Base: "HEAD", Head: "main", SelfCheck: true}, "one ref"},
		{"no head", Config{Base: "main"}, "head is empty"},
		{"no base", Config{Head: "main"}, "base is empty"},
		{"negative rounds", Config{Base: "a", Head: "b", Rounds: -1}, "rounds"},
		{"negative warmup is none", Config{Base: "a", Head: "b", Warmup: -1}, ""},
		{"alpha", Config{Base: "a", Head: "b", Alpha: 1}, "alpha"},
		{"serve without addr", Config{Base: "a", Head: "b", Serve: "{bin} serve"}, "{addr}"},
		{"serve unbalanced quote", Config{Base: "a", Head: "b", Serve: "{bin} '{addr}"}, "quote"},
		{"build without out", Config{Base: "a", Head: "b", Build: "make"}, "{out}"},
		{"load sets endpoint", Config{Base: "a", Head: "b", Load: []string{"--endpoint=http://x"}}, "set by compare"},
		{"syscall gate without --syscalls", Config{Base: "a", Head: "b", Gates: []Gate{{MetricSyscalls, 0.1}}}, "--syscalls"},
		{"no gates", Config{Base: "a", Head: "b", Gates: []Gate{}}, ""},
		{"allow blind p99 and cpu", Config{Base: "a", Head: "b", AllowBlind: []string{"p99", "cpu"}}, ""},
		{"allow blind all", Config{Base: "a", Head: "b", AllowBlind: []string{AllowBlindAll}}, ""},
		{"allow blind unknown metric", Config{Base: "a", Head: "b", AllowBlind: []string{"latency"}}, "--allow-blind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			case err != nil && !errors.Is(err, ErrUsage):
				t.Errorf("Validate() = %v, want it to wrap ErrUsage", err)
			}
		})
	}
}

// TestWarmupDefault: the zero Config warms up DefaultWarmup rounds, as
// compare --warmup does by default; a negative Warmup runs none.
func TestWarmupDefault(t *testing.T) {
	tests := []struct {
		warmup, want int
	}{
		{0, DefaultWarmup},
		{-1, 0},
		{3, 3},
	}
	for _, tt := range tests {
		c := Config{Base: "a", Head: "b", Warmup: tt.warmup}
		if got := c.withDefaults().Warmup; got != tt.want {
			t.Errorf("Warmup %d: got %d warmup rounds, want %d", tt.warmup, got, tt.want)
		}
	}
}
