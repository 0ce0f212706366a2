package project

import (
	"fmt"

	"github.com/otelbench/otelbench/internal/schema"
)

// checkRowids verifies that the last row b inserted got rowid want, the id the projector
// assigned it (rows take SQLite's next rowid: see newInserts). A mismatch fails the slice, and
// the retry loads the ids afresh.
func checkRowids(table string, b *connBulk, want int64) error {
	if b.lastID != want {
		return fmt.Errorf("insert %s: the last row got rowid %d where the projector assigned %d", table, b.lastID, want)
	}
	return nil
}

// checkPointRowids flushes b, the rows of schema.PointTables[table] the slice inserted (the projector
// assigned them rowids first up to next-1), and verifies that the last one got its rowid.
func checkPointRowids(table int, b *connBulk, next, first int64) error {
	if next == first {
		return nil
	}
	if err := b.flush(); err != nil {
		return fmt.Errorf("insert %s: %w", schema.PointTables[table], err)
	}
	return checkRowids(schema.PointTables[table], b, next-1)
}
