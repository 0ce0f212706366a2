package query

import "math"

// MaxExpBuckets bounds the buckets per sign that a series keeps of an
// exponential histogram: a point with a wider range is read at a lower scale
// (each step down merges bucket pairs, as the OpenTelemetry SDK's
// downscaling does), and so is a step's merge. Reading 1.3M-bucket points
// into full slices and maps took 1.8 s and 90 MB per request; at 2,048 a
// bucket is still within 0.04% of its neighbours' boundaries at scale 10.
const MaxExpBuckets = 2048

// minExpScale is the lowest scale OTLP defines.
const minExpScale = -10

// reduceExp reads a point's positive and negative bucket arrays (the JSON
// arrays of counts the store keeps) at the highest scale at or below scale
// where each spans at most MaxExpBuckets buckets. Memory is the returned
// buckets: the JSON is walked once, never decoded into a full slice. ok is
// false for malformed JSON or a range no scale down to -10 fits.
func reduceExp(scale, posOff int32, posJSON string, negOff int32, negJSON string) (newScale, pOff int32, pos []uint64, nOff int32, neg []uint64, ok bool) {
	np, nn := jsonArrayLen(posJSON), jsonArrayLen(negJSON)
	if np < 0 || nn < 0 {
		return 0, 0, nil, 0, nil, false
	}
	var shift int32
	for bucketSpan(posOff, np, shift) > MaxExpBuckets || bucketSpan(negOff, nn, shift) > MaxExpBuckets {
		shift++
	}
	if scale-shift < minExpScale {
		return 0, 0, nil, 0, nil, false
	}
	pOff, pos, ok = foldCounts(posJSON, posOff, np, shift)
	if !ok {
		return 0, 0, nil, 0, nil, false
	}
	nOff, neg, ok = foldCounts(negJSON, negOff, nn, shift)
	return scale - shift, pOff, pos, nOff, neg, ok
}

// bucketSpan is how many buckets indexes off..off+n-1 fall in at shift.
func bucketSpan(off int32, n int, shift int32) int64 {
	if n == 0 {
		return 0
	}
	lo := int64(off) >> shift
	hi := (int64(off) + int64(n) - 1) >> shift
	return hi - lo + 1
}

// jsonArrayLen counts the elements of a flat JSON array of numbers (-1 if
// it is not one).
func jsonArrayLen(s string) int {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return -1
	}
	body := s[1 : len(s)-1]
	n := 0
	blank := true
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == ',':
			n++
		case c != ' ':
			blank = false
		}
	}
	if blank {
		return 0
	}
	return n + 1
}

// foldCounts adds the n counts of the JSON array s, bucket indexes from off,
// into buckets at shift, and returns the first bucket's index and the
// buckets.
func foldCounts(s string, off int32, n int, shift int32) (int32, []uint64, bool) {
	if n == 0 {
		return 0, nil, true
	}
	lo := int64(off) >> shift
	out := make([]uint64, bucketSpan(off, n, shift))
	j := int64(0)
	var v uint64
	digits := 0
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			d := uint64(c - '0')
			if v > (math.MaxUint64-d)/10 {
				return 0, nil, false
			}
			v = v*10 + d
			digits++
		case c == ',' || c == ']':
			if digits == 0 || j >= int64(n) {
				return 0, nil, false
			}
			out[(int64(off)+j)>>shift-lo] += v
			j, v, digits = j+1, 0, 0
		case c == ' ':
		default:
			return 0, nil, false
		}
	}
	return int32(lo), out, j == int64(n)
}

// fit lowers the accumulator's scale until each sign spans at most
// MaxExpBuckets buckets: points of different ranges merged in one step could
// otherwise widen it without bound.
func (a *expAcc) fit() {
	for (mapSpan(a.pos) > MaxExpBuckets || mapSpan(a.neg) > MaxExpBuckets) && a.scale > minExpScale {
		a.pos, a.neg = rescale(a.pos, 1), rescale(a.neg, 1)
		a.scale--
	}
}

func mapSpan(m map[int32]uint64) int64 {
	if len(m) == 0 {
		return 0
	}
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for i := range m {
		lo, hi = min(lo, i), max(hi, i)
	}
	return int64(hi) - int64(lo) + 1
}
