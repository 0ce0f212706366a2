// Package hexid formats and parses OTLP trace and span ids as the store keeps them: lowercase
// hex, two digits a byte. The stager writes ids with Append, the trace-chunk encoder packs
// span ids through Parse64, and queries write packed ids back with Put64 and Append64. IsZero
// names the invalid id (every byte zero) for all of them.
package hexid

const digits = "0123456789abcdef"

// pairs holds the two lowercase hex digits of every byte value.
var pairs = func() (t [512]byte) {
	for i := range 256 {
		t[2*i], t[2*i+1] = digits[i>>4], digits[i&0xf]
	}
	return t
}()

// Append appends the lowercase hex of id to dst.
func Append(dst, id []byte) []byte {
	for _, c := range id {
		dst = append(dst, pairs[2*int(c)], pairs[2*int(c)+1])
	}
	return dst
}

// IsZero reports whether every byte of id is zero: OTLP's invalid trace or span id, which the
// scanner refuses in spans, the stager stores as no id, and the query API refuses.
func IsZero(id []byte) bool {
	for _, c := range id {
		if c != 0 {
			return false
		}
	}
	return true
}

// Put64 writes v as 16 lowercase hex digits into b[:16].
func Put64(b []byte, v uint64) {
	_ = b[15]
	for i := 14; i >= 0; i -= 2 {
		x := 2 * (v & 0xff)
		b[i], b[i+1] = pairs[x], pairs[x+1]
		v >>= 8
	}
}

// Append64 appends v as 16 lowercase hex digits.
func Append64(dst []byte, v uint64) []byte {
	dst = append(dst, "0000000000000000"...)
	Put64(dst[len(dst)-16:], v)
	return dst
}

// Parse64 parses exactly 16 hex digits (either case) as a span id's 8 bytes, big-endian. ok
// is false for any other string.
func Parse64(s string) (v uint64, ok bool) {
	if len(s) != 16 {
		return 0, false
	}
	for i := 0; i < 16; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}
