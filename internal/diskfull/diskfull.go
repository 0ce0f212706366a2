// Package diskfull classifies a failed SQLite write: lack of space (ErrDiskFull, which the
// store's callers answer differently from other failures) or anything else. The raw log's
// writer, the projectors, the schema upgrades and retention all wrap their errors through it.
package diskfull

import (
	"errors"
	"fmt"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/otelbench/otelbench/internal/sqlitec"
)

// ErrDiskFull means the commit failed for lack of space (SQLITE_FULL or ENOSPC); the batch
// was rolled back, nothing is corrupted, and later appends succeed once space returns.
var ErrDiskFull = errors.New("store: disk full")

// Classify wraps a SQLite error from action, mapping lack of space to ErrDiskFull.
func Classify(action string, err error) error {
	if Is(err) {
		return fmt.Errorf("store: %s: %w (%v)", action, ErrDiskFull, err)
	}
	return fmt.Errorf("store: %s: %w", action, err)
}

// Is reports whether err is a lack of space: ENOSPC, EDQUOT or SQLITE_FULL.
func Is(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_FULL
	}
	var ce *sqlitec.Error
	if errors.As(err, &ce) {
		return ce.Code()&0xff == sqlite3.SQLITE_FULL
	}
	return false
}
