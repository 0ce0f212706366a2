package otlpcodec

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/otelbench/otelbench/internal/otlpwire"
	"github.com/otelbench/otelbench/internal/signal"
)

// The memory cost of decoding with pdata.
//
// pdata allocates one Go object per protobuf message (per JSON object), so
// the cost of a decoding is per message as much as per byte: 2 million
// empty spans in a 4 MB body (two bytes each) took 481 MB. Measured with
// pdata v1.71 (runtime.MemStats.TotalAlloc around decodePdata): an empty
// span costs 254 bytes, an empty log record 174, an array element 90, an
// attribute 226 to 284 in JSON; typical requests (internal/otlpcodec/otlptest)
// cost 2-4 bytes per body byte and 300-700 bytes per record. DecodeCost
// charges the larger of the two bounds, which covers every case measured.
const (
	// DecodeFactor is how many bytes of decoded pdata one body byte is
	// charged for.
	DecodeFactor = 3
	// MessageDecodeBytes is how many bytes of decoded pdata one protobuf
	// message (or JSON object) is charged for.
	MessageDecodeBytes = 256
)

// DecodeCost is the memory charged for decoding a body of n bytes holding
// messages protobuf messages (or JSON objects) with pdata.
func DecodeCost(n, messages int) int64 {
	return max(DecodeFactor*int64(n), MessageDecodeBytes*int64(messages))
}

// maxJSONDepth bounds the bracket nesting of an OTLP-JSON body: an AnyValue
// level adds at most 1.5 brackets ({ AnyValue, { ArrayValue, [ values per
// two levels) and the deepest place an AnyValue sits (an exemplar's
// attribute) is under 17, so a body within otlpwire.RecursionLimit stays
// far below it. pdata's JSON decoder recurses per bracket with no limit of
// its own: 100,000 nested arrayValues in 2.8 MB took 2.4 s of CPU.
const maxJSONDepth = 2*otlpwire.RecursionLimit + 32

// jsonShape counts the objects of a JSON text (the '{' outside strings) and
// its deepest bracket nesting: every pdata object decoded from OTLP-JSON is
// a JSON object, so this bounds what decoding it allocates before anything
// is allocated. It stops at the first bracket past maxJSONDepth. Malformed
// text gets counts too; pdata refuses it afterwards.
func jsonShape(b []byte) (objects, depth int) {
	level := 0
	for len(b) > 0 {
		i := bytes.IndexAny(b, `{}[]"`)
		if i < 0 {
			break
		}
		c := b[i]
		b = b[i+1:]
		switch c {
		case '{', '[':
			if c == '{' {
				objects++
			}
			level++
			if depth = max(depth, level); depth > maxJSONDepth {
				return objects, depth // refused whatever follows
			}
		case '}', ']':
			level--
		case '"': // skip the string up to its closing quote
			for {
				j := bytes.IndexAny(b, `"\`)
				if j < 0 {
					return objects, depth
				}
				if b[j] == '"' {
					b = b[j+1:]
					break
				}
				b = b[min(j+2, len(b)):] // skip the escaped character
			}
		}
	}
	return objects, depth
}

// tooDeep is the error for an AnyValue nested to the limit, the same in
// both encodings.
func tooDeep() error {
	return fmt.Errorf("%w: %w: an attribute or body value nests arrayValue/kvlistValue to %d levels or more "+
		"(AnyValue, ArrayValue, KeyValueList and KeyValue each count one level; the limit is the OTLP protobuf decoder's)",
		ErrCorrupt, ErrTooDeep, otlpwire.RecursionLimit)
}

// tooDeepJSON is the error for JSON nested deeper than maxJSONDepth.
func tooDeepJSON(depth int) error {
	return fmt.Errorf("%w: %w: JSON nested %d brackets deep, more than the %d any OTLP value within the "+
		"AnyValue nesting limit of %d levels needs", ErrCorrupt, ErrTooDeep, depth, maxJSONDepth, otlpwire.RecursionLimit)
}

// checkDepth reports ErrTooDeep when payload, a protobuf encoding of a
// request of sig that pdata produced, nests an AnyValue to the limit: the
// JSON decoder has no such limit, but the projector reads the protobuf.
func checkDepth(sig signal.Signal, payload []byte) error {
	if errors.Is(scanProto(sig, payload).err, errTooDeep) {
		return tooDeep()
	}
	return nil
}
