package bytesize

import (
	"math"
	"testing"

	"github.com/spf13/pflag"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"4096", 4096, true},
		{"512B", 512, true},
		{"64KiB", 64 << 10, true},
		{"32MiB", 32 << 20, true},
		{"1GiB", 1 << 30, true},
		{"2TiB", 2 << 40, true},
		{"8MB", 8_000_000, true},
		{"1kB", 1000, true},
		{"1KB", 1000, true},
		{"3GB", 3_000_000_000, true},
		{" 16 MiB ", 16 << 20, true},
		{"", 0, false},
		{"MiB", 0, false},
		{"-1", 0, false},
		{"1.5GiB", 0, false},
		{"12 apples", 0, false},
		{"9000000TiB", 0, false},
		{"9223372036854775807", math.MaxInt64, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("Parse(%q) error = %v, want ok %v", tt.in, err, tt.ok)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatRoundTrips(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{1, "1B"},
		{1000, "1000B"},
		{1024, "1KiB"},
		{4 << 20, "4MiB"},
		{48 << 20, "48MiB"},
		{1536 << 20, "1536MiB"},
		{1 << 40, "1TiB"},
	}
	for _, tt := range tests {
		if got := Format(tt.n); got != tt.want {
			t.Errorf("Format(%d) = %q, want %q", tt.n, got, tt.want)
		}
		if back, err := Parse(Format(tt.n)); err != nil || back != tt.n {
			t.Errorf("Parse(Format(%d)) = %d, %v, want %d", tt.n, back, err, tt.n)
		}
	}
}

func TestFlag(t *testing.T) {
	var v int64
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	Int64Var(fs, &v, "queue-bytes", 32<<20, "queue limit")
	if v != 32<<20 {
		t.Fatalf("default: got %d, want %d", v, 32<<20)
	}
	if got := fs.Lookup("queue-bytes").DefValue; got != "32MiB" {
		t.Errorf("DefValue: got %q, want 32MiB", got)
	}
	if err := fs.Parse([]string{"--queue-bytes", "8MiB"}); err != nil {
		t.Fatal(err)
	}
	if v != 8<<20 {
		t.Errorf("after --queue-bytes 8MiB: got %d, want %d", v, 8<<20)
	}
	if err := fs.Parse([]string{"--queue-bytes", "lots"}); err == nil {
		t.Error("--queue-bytes lots: got no error, want one")
	}
}

func TestIntFlag(t *testing.T) {
	tests := []struct {
		arg  string
		want int
		ok   bool
	}{
		{"128", 128, true},
		{"4KiB", 4 << 10, true},
		{"1MB", 1_000_000, true},
		{"-1", 0, false},
		{"lots", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			var v int
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			IntVar(fs, &v, "body-bytes", 2048, "body size")
			if got := fs.Lookup("body-bytes").DefValue; got != "2KiB" {
				t.Errorf("DefValue: got %q, want 2KiB", got)
			}
			err := fs.Parse([]string{"--body-bytes", tt.arg})
			if (err == nil) != tt.ok {
				t.Fatalf("--body-bytes %s: got error %v, want ok %v", tt.arg, err, tt.ok)
			}
			if tt.ok && v != tt.want {
				t.Errorf("--body-bytes %s: got %d, want %d", tt.arg, v, tt.want)
			}
		})
	}
}
