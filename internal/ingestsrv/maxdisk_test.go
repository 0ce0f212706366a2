package ingestsrv

import "testing"

func TestParseMaxDisk(t *testing.T) {
	tests := []struct {
		in      string
		bytes   int64
		share   float64
		wantErr bool
	}{
		{in: ""},
		{in: "0"},
		{in: "10GiB", bytes: 10 << 30},
		{in: "512MiB", bytes: 512 << 20},
		{in: "80%", share: 0.8},
		{in: "100%", share: 1},
		{in: "0%", wantErr: true},
		{in: "120%", wantErr: true},
		{in: "off", wantErr: true},
		{in: "10GB", bytes: 10e9},
		{in: "10 apples", wantErr: true},
		{in: "-1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			bytes, share, err := ParseMaxDisk(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("got error %v, want error %v", err, tt.wantErr)
			}
			if bytes != tt.bytes || share != tt.share {
				t.Errorf("got %d bytes, share %v; want %d, %v", bytes, share, tt.bytes, tt.share)
			}
		})
	}
}
