package ingestsrv

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMaxDisk parses --max-disk: a size with units (10GiB, 500MB; internal/bytesize) or a share of
// the data directory's filesystem (80%). It returns the size in bytes or the share in (0, 1];
// "" and "0" mean no bound.
func ParseMaxDisk(s string) (bytes int64, share float64, err error) {
	if s == "" || s == "0" {
		return 0, 0, nil
	}
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(pct, 64)
		if err != nil || !(v > 0 && v <= 100) {
			return 0, 0, fmt.Errorf("max disk: %q is not a share like 80%% (0 to 100%%)", s)
		}
		return 0, v / 100, nil
	}
	n, err := parseMemoryLimit(s)
	if err != nil || s == "off" {
		return 0, 0, fmt.Errorf("max disk: %q is not a size like 10GiB or a share like 80%%", s)
	}
	return n, 0, nil
}
