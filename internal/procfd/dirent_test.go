package procfd

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"testing"
)

// appendDirent encodes one linux_dirent64 record, padded to 8 bytes as the
// kernel does.
func appendDirent(b []byte, ino uint64, name string) []byte {
	reclen := (direntNameOff + len(name) + 1 + 7) &^ 7
	rec := make([]byte, reclen)
	binary.NativeEndian.PutUint64(rec[direntInoOff:], ino)
	binary.NativeEndian.PutUint64(rec[8:], uint64(len(b)+reclen)) // d_off
	binary.NativeEndian.PutUint16(rec[direntReclenOff:], uint16(reclen))
	rec[18] = 10 // DT_LNK
	copy(rec[direntNameOff:], name)
	return append(b, rec...)
}

func TestCountDirents(t *testing.T) {
	dirents := func(names ...string) []byte {
		var b []byte
		for i, n := range names {
			b = appendDirent(b, uint64(i+1), n)
		}
		return b
	}
	tests := []struct {
		name    string
		buf     []byte
		want    int
		wantErr bool
	}{
		{"empty", nil, 0, false},
		{"dots only", dirents(".", ".."), 0, false},
		{"fds", dirents(".", "..", "0", "1", "2", "255"), 4, false},
		{"dot prefixed names count", dirents("...", ".a", "..b"), 3, false},
		{"long name", dirents("1234567890123456789012345678901234567890"), 1, false},
		{"deleted entry skipped", appendDirent(dirents("0"), 0, "1"), 1, false},
		{"truncated header", dirents("0", "1")[:30], 1, true},
		{"reclen past end", func() []byte {
			b := dirents("0")
			binary.NativeEndian.PutUint16(b[direntReclenOff:], 200)
			return b
		}(), 0, true},
		{"reclen zero", func() []byte {
			b := dirents("0", "1")
			binary.NativeEndian.PutUint16(b[24+direntReclenOff:], 0)
			return b
		}(), 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := countDirents(tt.buf)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("countDirents = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadDirent) {
				t.Errorf("error %v is not ErrBadDirent", err)
			}
			if allocs := testing.AllocsPerRun(10, func() { countDirents(tt.buf) }); !tt.wantErr && allocs != 0 {
				t.Errorf("countDirents allocated %v times, want 0", allocs)
			}
		})
	}
}

func TestAppendNumericNames(t *testing.T) {
	var b []byte
	for i, n := range []string{".", "..", "1", "self", "thread-self", "42", "0", "007", "99999999999", "12a", "2147483647", "2147483648"} {
		b = appendDirent(b, uint64(i+1), n)
	}
	got, err := appendNumericNames(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 42, 7, 2147483647}; !slices.Equal(got, want) {
		t.Errorf("appendNumericNames = %v, want %v", got, want)
	}
}

// refCount is the obvious, allocating reading of the same records: the
// oracle the fuzz target checks countDirents and appendNumericNames against.
func refCount(buf []byte) (names []string, ok bool) {
	for off := 0; off < len(buf); {
		if len(buf)-off < 20 {
			return names, false
		}
		reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
		if reclen < 20 || off+reclen > len(buf) {
			return names, false
		}
		ino := binary.NativeEndian.Uint64(buf[off:])
		name := buf[off+19 : off+reclen]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		off += reclen
		if ino != 0 && string(name) != "." && string(name) != ".." {
			names = append(names, string(name))
		}
	}
	return names, true
}

func FuzzCountDirents(f *testing.F) {
	var b []byte
	for i, n := range []string{".", "..", "0", "1", "12345", "self"} {
		b = appendDirent(b, uint64(i+1), n)
	}
	f.Add(b, 2)
	f.Add(b[:27], 0)
	f.Add([]byte{}, 5)
	f.Add(make([]byte, 24), 1<<30)
	f.Fuzz(func(t *testing.T, buf []byte, hi int) {
		n, err := countDirents(buf)
		names, ok := refCount(buf)
		if ok != (err == nil) {
			t.Fatalf("countDirents error %v, reference ok %v", err, ok)
		}
		if ok && n != len(names) {
			t.Fatalf("countDirents = %d, reference %d (%q)", n, len(names), names)
		}
		ids, err := appendNumericNames(nil, buf)
		if ok != (err == nil) {
			t.Fatalf("appendNumericNames error %v, reference ok %v", err, ok)
		}
		var want []int
		for _, s := range names {
			v, err := strconv.ParseUint(s, 10, 31)
			if err == nil && v > 0 && len(s) <= 10 {
				want = append(want, int(v))
			}
		}
		if ok && !slices.Equal(ids, want) {
			t.Fatalf("appendNumericNames = %v, want %v", ids, want)
		}
		// refCount's names are those before any malformed record; that
		// countFDsBelow stops at the first descriptor >= hi without reading
		// further is fine.
		below, above, last, err := countFDsBelow(buf, hi)
		wb, wa, wl := 0, -1, -1
		for _, s := range names {
			v, err := strconv.ParseUint(s, 10, 31)
			if err != nil || len(s) > 10 {
				wb++
				continue
			}
			if int(v) >= hi {
				wa = int(v)
				break
			}
			wb++
			wl = int(v)
		}
		if wantErr := !ok && wa < 0; (err != nil) != wantErr {
			t.Fatalf("countFDsBelow error %v, want error %v", err, wantErr)
		}
		if below != wb || above != wa || last != wl {
			t.Fatalf("countFDsBelow(hi=%d) = %d %d %d, want %d %d %d (%q)", hi, below, above, last, wb, wa, wl, names)
		}
	})
}
