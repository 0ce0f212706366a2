package store

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fsSize returns the size in bytes of the filesystem that holds dir (statfs(2)).
func fsSize(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Blocks) * int64(st.Bsize), nil
}
