package logline

import (
	"errors"
	"testing"
	"time"
)

func TestAppendParse(t *testing.T) {
	l := Line{Stream: 3, Seq: 41, TimeNs: 1765000000123456789}
	tests := []struct {
		format Format
		size   int
		want   string
	}{
		{JSON, 0, `{"time_ns":1765000000123456789,"stream":3,"seq":41,"level":"info","msg":"x"}` + "\n"},
		{Logfmt, 0, "time_ns=1765000000123456789 stream=3 seq=41 level=info msg=x\n"},
		{Plain, 0, "1765000000123456789 3 41 INFO x\n"},
		{Plain, 40, "1765000000123456789 3 41 INFO xxxxxxxxx\n"},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			got := string(Append(nil, tt.format, l, tt.size))
			if got != tt.want {
				t.Fatalf("Append = %q, want %q", got, tt.want)
			}
			back, err := Parse([]byte(got))
			if err != nil || back != l {
				t.Fatalf("Parse = %+v, %v; want %+v", back, err, l)
			}
		})
	}
}

func TestAppendSizes(t *testing.T) {
	l := Line{Stream: 12, Seq: 123456, TimeNs: time.Now().UnixNano()}
	for _, f := range Formats {
		for _, size := range []int{100, 257, 1024} {
			if got := len(Append(nil, f, l, size)); got != size {
				t.Errorf("%s: len(Append(size %d)) = %d, want %d", f, size, got, size)
			}
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Line
		err  bool
	}{
		{"cri prefix", "2026-12-04T22:15:24.123456789Z stdout F 5 1 2 INFO x", Line{TimeNs: 5, Stream: 1, Seq: 2}, false},
		{"crlf", "time_ns=7 stream=0 seq=9 level=info msg=x\r\n", Line{TimeNs: 7, Seq: 9}, false},
		{"empty", "", Line{}, true},
		{"text", "hello world", Line{}, true},
		{"json missing seq", `{"time_ns":1,"stream":2}`, Line{}, true},
		{"overflow", "99999999999999999999 1 1 INFO x", Line{}, true},
		{"negative", "time_ns=-1 stream=0 seq=1", Line{}, true},
		{"cri without line", "2026-12-04T22:15:24.123456789Z stdout", Line{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if (err != nil) != tt.err {
				t.Fatalf("Parse(%q) error = %v, want error %v", tt.in, err, tt.err)
			}
			if err != nil && !errors.Is(err, ErrUnparseable) {
				t.Errorf("error %v does not wrap ErrUnparseable", err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, fm := range Formats {
		f.Add(Append(nil, fm, Line{Stream: 1, Seq: 2, TimeNs: 3}, 60))
	}
	f.Add([]byte("2026-12-04T22:15:24Z stdout F {"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Parse(b)
		if err != nil {
			return
		}
		if l.Stream < 0 || l.Seq < 0 || l.TimeNs < 0 {
			t.Fatalf("Parse(%q) = %+v: negative field", b, l)
		}
	})
}
