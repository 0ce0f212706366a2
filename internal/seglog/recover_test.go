package seglog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lastRecord writes n records in one segment, closes the log and returns the segment's path
// and the offsets of its last record's start and end (zeros follow up to the segment size).
func lastRecord(t *testing.T, dir string, n int64) (path string, off, end int64) {
	t.Helper()
	cfg := tornCfg
	cfg.Dir = dir
	l := openLog(t, cfg)
	appendN(t, l, 1, n-1, 1)
	off = l.Segments()[0].Bytes
	appendN(t, l, n, n, 1)
	path, end = l.Segments()[0].Path, l.Segments()[0].Bytes
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path, off, end
}

func TestTornTail(t *testing.T) {
	src := t.TempDir()
	path, off, end := lastRecord(t, src, 5)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name string
		data []byte
	}
	var tests []tc
	for cut := off; cut < end; cut++ {
		tests = append(tests, tc{fmt.Sprintf("cut at %d", cut), whole[:cut]})
	}
	for i := off; i < end; i++ {
		b := bytes.Clone(whole)
		b[i] ^= 0x40
		tests = append(tests, tc{fmt.Sprintf("flip byte %d", i), b})
	}
	for _, tt := range tests {
		dir := t.TempDir()
		p := filepath.Join(dir, filepath.Base(path))
		if err := os.WriteFile(p, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := tornCfg
		cfg.Dir = dir
		l, err := Open(cfg)
		if err != nil {
			t.Fatalf("%s: open: %v", tt.name, err)
		}
		if got := l.Durable(); got != 4 {
			t.Errorf("%s: durable: got %d, want 4", tt.name, got)
		}
		checkRows(t, l, 0, Limits{}, 1, 4)
		appendN(t, l, 5, 6, 1) // the cut record's id is free again: it was never acknowledged
		checkRows(t, l, 0, Limits{}, 1, 6)
		l.Close()
		if fi, _ := os.Stat(p); tt.name[:3] == "cut" && fi.Size() <= off {
			t.Errorf("%s: file size %d, want the new records past %d", tt.name, fi.Size(), off)
		}
	}
}

func TestCorruptSealed(t *testing.T) {
	tests := []struct {
		name    string
		at      func(hdrOff int64) int64
		openErr bool
		exact   bool // the error names the bad record's own offset, not a later one's
	}{
		// A wrong length shows at the next header: open checks sealed segments' headers only.
		{"header length", func(o int64) int64 { return o }, true, false},
		{"header id", func(o int64) int64 { return o + 8 }, true, true},
		{"header signal", func(o int64) int64 { return o + 28 }, true, true},
		{"payload", func(o int64) int64 { return o + headerSize + 2 }, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Dir: dir, SegmentBytes: 4 << 10}
			l := openLog(t, cfg)
			appendN(t, l, 1, 2, 1)
			hdrOff := l.Segments()[0].Bytes // record 3, mid first segment
			appendN(t, l, 3, 200, 1)
			seg := l.Segments()[0].Path
			l.Close()
			b, _ := os.ReadFile(seg)
			b[tt.at(hdrOff)] ^= 0x21
			os.WriteFile(seg, b, 0o644)
			wantMsg := fmt.Sprintf("%s at offset %d", seg, hdrOff)
			if !tt.exact {
				wantMsg = seg + " at offset "
			}
			l, err := Open(cfg)
			if tt.openErr {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), wantMsg) {
					t.Fatalf("open: got %v, want ErrCorrupt naming %q", err, wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("open: got %v, want nil (payloads of sealed segments are checked on read)", err)
			}
			defer l.Close()
			r := l.NewReader()
			defer r.Close()
			rows, _, err := r.Read(0, Limits{Rows: 1}, nil)
			if err != nil || len(rows) != 1 {
				t.Fatalf("read before the bad record: got %d rows, %v; want 1, nil", len(rows), err)
			}
			_, _, err = r.Read(2, Limits{}, nil)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), wantMsg) {
				t.Fatalf("read: got %v, want ErrCorrupt naming %q", err, wantMsg)
			}
		})
	}
}

// TestStaleRecordAfterZeroHeader: after a crash, a later record can be on disk while the page
// before it is still zeros. Recovery ends the log at the zero header; a new record of the same
// length written there must not make the stale one after it readable.
func TestStaleRecordAfterZeroHeader(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, SegmentBytes: 64 << 10}
	l := openLog(t, cfg)
	appendN(t, l, 1, 2, 1)
	off := l.Segments()[0].Bytes
	appendN(t, l, 3, 5, 1)
	path := l.Segments()[0].Path
	l.Close()
	b, _ := os.ReadFile(path)
	clear(b[off : off+headerSize]) // record 3's header never reached the disk; 4 and 5 did
	os.WriteFile(path, b, 0o644)
	l = openLog(t, cfg)
	if got := l.Durable(); got != 2 {
		t.Fatalf("durable after recovery: got %d, want 2", got)
	}
	appendN(t, l, 3, 3, 1) // the same length as the lost record 3
	l.Close()
	l = openLog(t, cfg)
	defer l.Close()
	if got := l.Durable(); got != 3 {
		t.Fatalf("durable after the second reopen: got %d, want 3 (stale 4 and 5 must stay gone)", got)
	}
	checkRows(t, l, 0, Limits{}, 1, 3)
}
