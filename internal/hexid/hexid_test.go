package hexid

import (
	"encoding/hex"
	"strconv"
	"testing"
)

func TestParse64(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0000000000000000", 0, true},
		{"00f067aa0ba902b7", 0x00f067aa0ba902b7, true},
		{"00F067AA0BA902B7", 0x00f067aa0ba902b7, true},
		{"ffffffffffffffff", ^uint64(0), true},
		{"", 0, false},
		{"00f067aa0ba902b", 0, false},
		{"00f067aa0ba902b70", 0, false},
		{"00f067aa0ba902bg", 0, false},
		{"NOTHEX0000000003", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := Parse64(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Parse64(%q) = %#x, %v; want %#x, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestFormat holds Append, Append64 and Put64 to encoding/hex and strconv, and Parse64 to
// their inverse.
func TestFormat(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xab, 0x00f067aa0ba902b7, 1 << 63, ^uint64(0)} {
		want := strconv.FormatUint(v, 16)
		want = "0000000000000000"[len(want):] + want
		if got := string(Append64([]byte("x"), v)); got != "x"+want {
			t.Errorf("Append64(%#x) = %q, want %q", v, got, "x"+want)
		}
		if back, ok := Parse64(want); !ok || back != v {
			t.Errorf("Parse64(%q) = %#x, %v; want %#x", want, back, ok, v)
		}
	}
	id := []byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	if got, want := string(Append(nil, id)), hex.EncodeToString(id); got != want {
		t.Errorf("Append = %q, want %q", got, want)
	}
}

func TestIsZero(t *testing.T) {
	for _, tc := range []struct {
		id   []byte
		want bool
	}{
		{nil, true},
		{make([]byte, 16), true},
		{make([]byte, 8), true},
		{append(make([]byte, 15), 1), false},
		{append([]byte{0x80}, make([]byte, 7)...), false},
	} {
		if got := IsZero(tc.id); got != tc.want {
			t.Errorf("IsZero(%x) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
