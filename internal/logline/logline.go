package logline

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Format is the shape of a line.
type Format string

// Formats.
const (
	JSON   Format = "json"
	Logfmt Format = "logfmt"
	Plain  Format = "plain"
)

// Formats lists the accepted formats.
var Formats = []Format{JSON, Logfmt, Plain}

// ParseFormat returns the Format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("format %q: want json, logfmt or plain", s)
}

// Line is what a line carries.
type Line struct {
	Stream int
	Seq    int64
	TimeNs int64
}

// ErrUnparseable is wrapped by every Parse error.
var ErrUnparseable = errors.New("not a pipeline line")

// MinBytes returns the shortest line (newline included) of format f for l:
// the fixed fields with a one-byte message.
func MinBytes(f Format, l Line) int { return len(Append(nil, f, l, 0)) }

// Append appends the line l of format f, padded with 'x' in its message so
// that it is size bytes long including the newline (or as short as it can
// be, when size is smaller), and returns the extended slice.
func Append(dst []byte, f Format, l Line, size int) []byte {
	start := len(dst)
	switch f {
	case JSON:
		dst = append(dst, `{"time_ns":`...)
		dst = strconv.AppendInt(dst, l.TimeNs, 10)
		dst = append(dst, `,"stream":`...)
		dst = strconv.AppendInt(dst, int64(l.Stream), 10)
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendInt(dst, l.Seq, 10)
		dst = append(dst, `,"level":"info","msg":"`...)
		dst = pad(dst, size-(len(dst)-start)-3)
		dst = append(dst, "\"}\n"...)
	case Logfmt:
		dst = append(dst, "time_ns="...)
		dst = strconv.AppendInt(dst, l.TimeNs, 10)
		dst = append(dst, " stream="...)
		dst = strconv.AppendInt(dst, int64(l.Stream), 10)
		dst = append(dst, " seq="...)
		dst = strconv.AppendInt(dst, l.Seq, 10)
		dst = append(dst, " level=info msg="...)
		dst = pad(dst, size-(len(dst)-start)-1)
		dst = append(dst, '\n')
	default:
		dst = strconv.AppendInt(dst, l.TimeNs, 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(l.Stream), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, l.Seq, 10)
		dst = append(dst, " INFO "...)
		dst = pad(dst, size-(len(dst)-start)-1)
		dst = append(dst, '\n')
	}
	return dst
}

func pad(dst []byte, n int) []byte {
	n = max(n, 1)
	for range n {
		dst = append(dst, 'x')
	}
	return dst
}

// AppendCRI appends the CRI container-log prefix kubelet's runtimes write
// before every line of /var/log/pods/.../0.log: time, stream, full-line tag.
func AppendCRI(dst []byte, t time.Time) []byte {
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	return append(dst, " stdout F "...)
}

// Parse reads the stream, sequence number and write time out of b, one line
// in any Format (the format is told by its first byte).
func Parse(b []byte) (Line, error) {
	b = trimCRI(trimEOL(b))
	if len(b) == 0 {
		return Line{}, fmt.Errorf("%w: empty", ErrUnparseable)
	}
	var keys [3]string
	switch {
	case b[0] == '{':
		keys = [3]string{`{"time_ns":`, `,"stream":`, `,"seq":`}
	case b[0] == 't':
		keys = [3]string{"time_ns=", " stream=", " seq="}
	case b[0] >= '0' && b[0] <= '9':
		keys = [3]string{"", " ", " "}
	default:
		return Line{}, fmt.Errorf("%w: starts with %q", ErrUnparseable, b[0])
	}
	var v [3]int64
	for i, k := range keys {
		if len(b) < len(k) || string(b[:len(k)]) != k {
			return Line{}, fmt.Errorf("%w: want %q", ErrUnparseable, k)
		}
		b = b[len(k):]
		var ok bool
		if v[i], b, ok = number(b); !ok {
			return Line{}, fmt.Errorf("%w: field %q is not a number", ErrUnparseable, k)
		}
	}
	if v[1] > int64(^uint32(0)>>1) {
		return Line{}, fmt.Errorf("%w: stream %d out of range", ErrUnparseable, v[1])
	}
	return Line{TimeNs: v[0], Stream: int(v[1]), Seq: v[2]}, nil
}

// number reads a non-negative decimal that fits an int64 at the start of b.
func number(b []byte) (int64, []byte, bool) {
	var n int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n > (1<<63-1-9)/10 {
			return 0, b, false
		}
		n = n*10 + int64(b[i]-'0')
	}
	return n, b[i:], i > 0
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// trimCRI drops a leading "<RFC3339 time> <stream> <tag> " prefix.
func trimCRI(b []byte) []byte {
	if len(b) < 20 || b[4] != '-' || b[10] != 'T' {
		return b
	}
	rest := b
	for range 3 {
		i := bytes.IndexByte(rest, ' ')
		if i < 0 {
			return b
		}
		rest = rest[i+1:]
	}
	return rest
}
