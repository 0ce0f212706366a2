package compare

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseLoadReport(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    loadResult
		wantErr bool
	}{
		{"closed model", "load-closed.json", loadResult{
			Requests: 2000, RequestsPerSecond: 1000, RecordsPerSecond: 10000,
			P50: 0.0012, P99: 0.0045, Errors: 7,
		}, false},
		{"closed model, v2", "load-closed-v2.json", loadResult{
			Requests: 2000, RequestsPerSecond: 1000, RecordsPerSecond: 10000,
			P50: 0.0012, P99: 0.0045, Errors: 7,
		}, false},
		{"wrong schema", "load-badschema.json", loadResult{}, true},
		{"not json", "load-garbage.json", loadResult{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseLoadReport(b)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseLoadReport error = %v, want error: %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("parseLoadReport = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseLoadReport(f *testing.F) {
	for _, name := range []string{"load-closed.json", "load-badschema.json", "load-garbage.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseLoadReport(b)
		if err != nil {
			return
		}
		if r.Requests < 0 || r.Errors < 0 || r.P99 < 0 {
			t.Errorf("parseLoadReport accepted negative values: %+v", r)
		}
	})
}

func TestCheckLoadArgs(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
	}{
		{[]string{"--duration", "1s", "--concurrency", "4"}, false},
		{[]string{"--endpoint", "http://x"}, true},
		{[]string{"--json=out.json"}, true},
	}
	for _, tt := range tests {
		if err := checkLoadArgs(tt.args); (err != nil) != tt.wantErr {
			t.Errorf("checkLoadArgs(%q) = %v, want error: %v", tt.args, err, tt.wantErr)
		}
	}
}
