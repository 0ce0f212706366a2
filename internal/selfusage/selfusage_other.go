//go:build !unix

package selfusage

import (
	"errors"
	"time"
)

// ErrNotSupported is returned where getrusage does not exist.
var ErrNotSupported = errors.New("selfusage: process CPU and peak RSS need getrusage (a Unix system)")

// CPU returns ErrNotSupported.
func CPU() (time.Duration, error) { return 0, ErrNotSupported }

// PeakRSS returns ErrNotSupported.
func PeakRSS() (int64, error) { return 0, ErrNotSupported }
