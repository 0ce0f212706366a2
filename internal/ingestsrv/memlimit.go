package ingestsrv

import (
	"fmt"
	"math"

	"github.com/otelbench/otelbench/internal/bytesize"
)

// DefaultMemoryLimit is the Go runtime's soft memory limit `otelbench serve`
// sets when neither --memory-limit nor GOMEMLIMIT says otherwise. It bounds
// the Go heap only: SQLite's memory (modernc.org/sqlite allocates outside
// the Go heap) and the binary's pages come on top, about 50-70 MB more
// under load (docs/benchmarks/serve.md). Without it the heap goal (twice the
// live heap) followed every burst of the projector: 143 MB goals during a
// bulk load of 1000-record requests. 40 MiB rather than 64 (c61b335):
// with two projectors each staging its next slice, a catch-up
// after a mixed load peaked at 109-112 MB under 64 MiB and at 88-92 MB
// under 40, as fast; the GC works harder under a 10x overload (CPU per
// accepted request 149 -> 251 us, peak RSS 93 -> 76 MB; docs/benchmarks/store.md).
const DefaultMemoryLimit int64 = 40 << 20

// MemoryLimit resolves the soft memory limit to apply from the
// --memory-limit flag value and the GOMEMLIMIT environment variable, in
// that order of precedence. It returns the limit in bytes, math.MaxInt64
// for "off" (no limit), or -1 when the flag is empty and GOMEMLIMIT is set
// (the Go runtime has applied it already: leave it). The syntax is
// GOMEMLIMIT's (an integer with an optional B, KiB, MiB, GiB or TiB suffix),
// plus the SI units kB, MB, GB and TB.
func MemoryLimit(flag, env string) (int64, error) {
	switch {
	case flag != "":
		n, err := parseMemoryLimit(flag)
		if err != nil {
			return 0, fmt.Errorf("memory limit: %w", err)
		}
		return n, nil
	case env != "":
		return -1, nil
	default:
		return DefaultMemoryLimit, nil
	}
}

// parseMemoryLimit parses a byte size (bytesize.Parse: GOMEMLIMIT's units
// and SI ones); "off" means no limit.
func parseMemoryLimit(s string) (int64, error) {
	if s == "off" {
		return math.MaxInt64, nil
	}
	n, err := bytesize.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("%w, or off", err)
	}
	return n, nil
}
