package query

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// Cursor marks where the next page of newest-first logs starts: strictly
// older than (TimeUnixNano, ID).
type Cursor struct {
	TimeUnixNano int64
	ID           int64
}

const cursorVersion = 1

// String encodes c as opaque URL-safe text.
func (c Cursor) String() string {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64)
	b = append(b, cursorVersion)
	b = binary.AppendVarint(b, c.TimeUnixNano)
	b = binary.AppendVarint(b, c.ID)
	return base64.RawURLEncoding.EncodeToString(b)
}

// parseCursor decodes text made by Cursor.String.
func parseCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 3 || b[0] != cursorVersion {
		return Cursor{}, errors.New("malformed cursor")
	}
	b = b[1:]
	t, n := binary.Varint(b)
	if n <= 0 {
		return Cursor{}, errors.New("malformed cursor")
	}
	b = b[n:]
	id, n := binary.Varint(b)
	if n <= 0 || n != len(b) || id < 0 {
		return Cursor{}, errors.New("malformed cursor")
	}
	return Cursor{TimeUnixNano: t, ID: id}, nil
}
