package procfd

import (
	"encoding/binary"
	"fmt"
)

// Layout of struct linux_dirent64 (getdents64(2)):
//
//	u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; (NUL-terminated)
const (
	direntInoOff    = 0
	direntReclenOff = 16
	direntNameOff   = 19
	// direntMinReclen is the header plus the name's NUL terminator.
	direntMinReclen = direntNameOff + 1
)

// countDirents returns how many entries the getdents64 records in buf name,
// not counting "." and ".." nor records with inode 0 (deleted entries, which
// os.File.Readdirnames skips as well). It reads the records in place and
// allocates nothing. A record that is truncated or whose length points past
// buf is an ErrBadDirent; the count of the records before it is returned.
func countDirents(buf []byte) (int, error) {
	n := 0
	for off := 0; off < len(buf); {
		name, live, next, err := direntAt(buf, off)
		if err != nil {
			return n, err
		}
		off = next
		if live && !isDotOrDotDot(name) {
			n++
		}
	}
	return n, nil
}

// direntAt reads the getdents64 record at buf[off:]: its NUL-padded name, whether it is live
// (inode 0 marks a deleted entry) and the offset of the next record. A record that is truncated
// or whose length points past buf is an ErrBadDirent.
func direntAt(buf []byte, off int) (name []byte, live bool, next int, err error) {
	rest := buf[off:]
	if len(rest) < direntMinReclen {
		return nil, false, 0, fmt.Errorf("%w: %d trailing bytes at offset %d", ErrBadDirent, len(rest), off)
	}
	reclen := int(binary.NativeEndian.Uint16(rest[direntReclenOff:]))
	if reclen < direntMinReclen || reclen > len(rest) {
		return nil, false, 0, fmt.Errorf("%w: record length %d at offset %d of %d", ErrBadDirent, reclen, off, len(buf))
	}
	live = binary.NativeEndian.Uint64(rest[direntInoOff:]) != 0
	return rest[direntNameOff:reclen], live, off + reclen, nil
}

// isDotOrDotDot reports whether the NUL-terminated (or unterminated) name
// is "." or "..".
func isDotOrDotDot(name []byte) bool {
	if len(name) == 0 || name[0] != '.' {
		return false
	}
	if len(name) == 1 || name[1] == 0 {
		return true
	}
	return name[1] == '.' && (len(name) == 2 || name[2] == 0)
}

// appendNumericNames appends to dst the names in the getdents64 records of
// buf that are decimal numbers (process and thread IDs under a proc mount),
// skipping every other name, without allocating a string per entry.
func appendNumericNames(dst []int, buf []byte) ([]int, error) {
	for off := 0; off < len(buf); {
		name, live, next, err := direntAt(buf, off)
		if err != nil {
			return dst, err
		}
		off = next
		if !live {
			continue
		}
		if v, ok := parseID(name); ok {
			dst = append(dst, v)
		}
	}
	return dst, nil
}

// parseID parses a process or thread ID: a decimal name (see parseFDName)
// other than 0.
func parseID(name []byte) (int, bool) {
	v, ok := parseFDName(name)
	return v, ok && v > 0
}

// parseFDName parses a NUL-terminated (or unterminated) decimal name of at
// most 10 digits, no sign, at most 2^31-1; ok is false for anything else.
func parseFDName(name []byte) (int, bool) {
	var v int64 // 10 digits overflow a 32-bit int
	i := 0
	for ; i < len(name) && name[i] != 0; i++ {
		c := name[i]
		if c < '0' || c > '9' || i >= 10 {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if i == 0 || v > 1<<31-1 {
		return 0, false
	}
	return int(v), true
}

// countFDsBelow reads the getdents64 records of an fd directory in buf (in
// ascending fd order, as procfs lists them) and returns how many name a
// descriptor below hi, the first descriptor >= hi it met (-1 if none: the
// records end below hi) and the highest descriptor below hi (-1 if none).
// Names that are not numbers count as below hi; "." and ".." do not count.
func countFDsBelow(buf []byte, hi int) (n, above, last int, err error) {
	above, last = -1, -1
	for off := 0; off < len(buf); {
		rest := buf[off:]
		if len(rest) < direntMinReclen {
			return n, above, last, fmt.Errorf("%w: %d trailing bytes at offset %d", ErrBadDirent, len(rest), off)
		}
		reclen := int(binary.NativeEndian.Uint16(rest[direntReclenOff:]))
		if reclen < direntMinReclen || reclen > len(rest) {
			return n, above, last, fmt.Errorf("%w: record length %d at offset %d of %d", ErrBadDirent, reclen, off, len(buf))
		}
		off += reclen
		if binary.NativeEndian.Uint64(rest[direntInoOff:]) == 0 {
			continue
		}
		name := rest[direntNameOff:reclen]
		fd, ok := parseFDName(name)
		switch {
		case !ok && isDotOrDotDot(name):
		case !ok:
			n++
		case fd >= hi:
			return n, fd, last, nil
		default:
			n++
			last = fd
		}
	}
	return n, above, last, nil
}
