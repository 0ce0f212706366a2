package compare

import "errors"

// ErrNotSupported is returned where sampling a process needs Linux /proc.
var ErrNotSupported = errors.New("sampling server processes needs Linux /proc")

// procSample is what compare reads about the server process from /proc.
type procSample struct {
	// CPUSeconds is user+system CPU time of the process so far.
	CPUSeconds float64
	// PeakRSS is VmHWM, the process's resident set high-water mark, in bytes.
	PeakRSS float64
	// FDs is the number of open file descriptors.
	FDs float64
}
