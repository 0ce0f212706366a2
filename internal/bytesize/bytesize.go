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

// value is the pflag.Value of a byte-size flag bound to an int or int64:
// it sets from Parse's syntax, refusing what T cannot hold, and prints with
// Format.
type value[T int | int64] struct{ p *T }

func (v value[T]) String() string {
	if v.p == nil {
		return "0"
	}
	return Format(int64(*v.p))
}

func (v value[T]) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	if int64(T(n)) != n {
		return fmt.Errorf("%q is more bytes than this flag holds", s)
	}
	*v.p = T(n)
	return nil
}

// Type names the value in flag usage ("--max-body size").
func (v value[T]) Type() string { return "size" }

// Int64Var defines a byte-size flag that writes into p, with default def.
func Int64Var(fs *pflag.FlagSet, p *int64, name string, def int64, usage string) {
	*p = def
	fs.Var(value[int64]{p}, name, usage)
}

// IntVar defines a byte-size flag that writes into the int p (a record's
// body length, say), with default def.
func IntVar(fs *pflag.FlagSet, p *int, name string, def int, usage string) {
	*p = def
	fs.Var(value[int]{p}, name, usage)
}
