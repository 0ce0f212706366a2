// Package bytesize parses and prints byte sizes with units ("32MiB", "8MB",
// "4096"), and is the pflag.Value of every byte-size flag of otelbench.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// units are the suffixes Parse accepts, longest first so that "MiB" is not
// read as "B". The IEC units are GOMEMLIMIT's; the SI ones are what people
// type after reading "MB" in a dashboard.
var units = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"KB", 1e3},
	{"B", 1},
}

// Parse returns the number of bytes s names: a non-negative integer with an
// optional unit B, KiB, MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB
// (powers of 1000). A bare number is bytes.
func Parse(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if v, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a byte size like 4096, 64KiB, 32MiB or 1GB", s)
	}
	return n * mult, nil
}

// Format prints n in the largest binary unit that divides it exactly
// (33554432 is "32MiB", 1000 is "1000B"), so that Parse(Format(n)) == n.
func Format(n int64) string {
	if n == 0 {
		return "0"
	}
	for _, u := range units {
		if u.mult >= 1<<10 && u.mult&(u.mult-1) == 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Size is an int64 byte count that implements pflag.Value: it sets from
// Parse's syntax and prints with Format.
type Size int64

// String prints the size with Format.
func (s *Size) String() string { return Format(int64(*s)) }

// Set parses v with Parse.
func (s *Size) Set(v string) error {
	n, err := Parse(v)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

// Type names the value in flag usage ("--max-body size").
func (s *Size) Type() string { return "size" }

// Int64Var defines a byte-size flag that writes into p, with default def.
func Int64Var(fs *pflag.FlagSet, p *int64, name string, def int64, usage string) {
	*p = def
	fs.Var((*Size)(p), name, usage)
}

// IntSize is Size for an int field (a record's body length, say); Set
// refuses what an int cannot hold.
type IntSize int

// String prints the size with Format.
func (s *IntSize) String() string { return Format(int64(*s)) }

// Set parses v with Parse.
func (s *IntSize) Set(v string) error {
	n, err := Parse(v)
	if err != nil {
		return err
	}
	if n > math.MaxInt {
		return fmt.Errorf("%q is larger than %d bytes", v, math.MaxInt)
	}
	*s = IntSize(n)
	return nil
}

// Type names the value in flag usage ("--body-bytes size").
func (s *IntSize) Type() string { return "size" }

// IntVar defines a byte-size flag that writes into the int p, with default def.
func IntVar(fs *pflag.FlagSet, p *int, name string, def int, usage string) {
	*p = def
	fs.Var((*IntSize)(p), name, usage)
}
