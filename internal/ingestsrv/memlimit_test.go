package ingestsrv

import (
	"math"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		name      string
		flag, env string
		want      int64
		wantErr   bool
	}{
		{"default", "", "", DefaultMemoryLimit, false},
		{"GOMEMLIMIT set: leave it", "", "200MiB", -1, false},
		{"flag wins over GOMEMLIMIT", "96MiB", "200MiB", 96 << 20, false},
		{"bytes", "1000000", "", 1000000, false},
		{"B suffix", "4096B", "", 4096, false},
		{"KiB", "512KiB", "", 512 << 10, false},
		{"GiB", "2GiB", "", 2 << 30, false},
		{"TiB", "1TiB", "", 1 << 40, false},
		{"off", "off", "", math.MaxInt64, false},
		{"SI unit", "64MB", "", 64_000_000, false},
		{"fraction", "1.5GiB", "", 0, true},
		{"negative", "-1MiB", "", 0, true},
		{"overflow", "9000000TiB", "", 0, true},
		{"empty number", "MiB", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MemoryLimit(tt.flag, tt.env)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}
