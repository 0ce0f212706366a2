//go:build !linux

package store

import "errors"

// ErrNotSupported is fsSize's error outside Linux: Config.MaxDiskShare needs statfs(2).
var ErrNotSupported = errors.New("store: a share of the filesystem as the size bound is supported on Linux only (give a size)")

func fsSize(string) (int64, error) { return 0, ErrNotSupported }
