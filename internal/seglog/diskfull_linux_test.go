package seglog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/otelbench/otelbench/internal/tmpfstest"
)

// TestDiskFull fills a real 1 MiB tmpfs: each Write either succeeds and its records are there
// after reopening, or fails with ErrDiskFull and leaves the file valid; once space is freed,
// writes succeed again with the next ids.
func TestDiskFull(t *testing.T) {
	mnt, freeSpace := tmpfstest.MountReserved(t, "1m", 256<<10)
	cfg := Config{Dir: filepath.Join(mnt, "log"), SegmentBytes: 128 << 10}
	l := openLog(t, cfg)
	var last int64
	diskFull := 0
	for i := 0; i < 2000 && diskFull < 10; i++ {
		batch := []Entry{entryOf(last + 1), entryOf(last + 2), entryOf(last + 3)}
		for j := range batch {
			batch[j].Payload = append(batch[j].Payload, make([]byte, 4000)...)
		}
		_, l3, err := l.Write(batch)
		switch {
		case err == nil:
			last = l3
		case errors.Is(err, ErrDiskFull):
			diskFull++
		default:
			t.Fatalf("write %d: got %v, want nil or ErrDiskFull", i, err)
		}
	}
	if diskFull == 0 {
		t.Fatalf("the disk never filled after %d records", last)
	}
	freeSpace()
	_, l1, err := l.Write([]Entry{entryOf(last + 1)})
	if err != nil || l1 != last+1 {
		t.Fatalf("write after freeing space: got id %d, %v; want %d, nil", l1, err, last+1)
	}
	last = l1
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, cfg)
	defer l.Close()
	if got := l.Durable(); got != last {
		t.Fatalf("after reopen: got last id %d, want %d", got, last)
	}
	checkPadded(t, l, 1, last)
	t.Logf("%d records written, %d writes refused for space", last, diskFull)
}

// TestDiskFullReleasesSpares fills a real tmpfs while the log keeps spare segments: a write that
// runs out of space fails with ErrDiskFull and gives the spares' room back, so the same write
// then succeeds, and every record is there after reopening.
func TestDiskFullReleasesSpares(t *testing.T) {
	mnt := tmpfstest.Mount(t, 0, "1m")
	cfg := Config{Dir: filepath.Join(mnt, "log"), SegmentBytes: 128 << 10, Spares: 2}
	l := openLog(t, cfg)
	entry := func(id int64) Entry {
		e := entryOf(id)
		e.Payload = append(e.Payload, make([]byte, 4000)...)
		return e
	}
	var last int64
	for last < 100 { // ~400 KB: three rolls
		if _, last, _ = l.Write([]Entry{entry(last + 1)}); last == 0 {
			t.Fatal("write failed")
		}
	}
	if err := l.WaitDurable(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	if _, _, err := l.DeleteThrough(segs[len(segs)-2].Last); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Spares != 2 {
		t.Fatalf("spares: got %d, want 2", st.Spares)
	}
	fillDisk(t, filepath.Join(mnt, "filler"))
	var batch []Entry
	for i := range int64(40) { // 160 KB: more than the active segment's allocated room
		batch = append(batch, entry(last+1+i))
	}
	if _, _, err := l.Write(batch); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("write past the allocated room on a full disk: got %v, want ErrDiskFull", err)
	}
	if st := l.Stats(); st.Spares != 0 {
		t.Errorf("spares after a write refused for space: got %d, want 0 (released)", st.Spares)
	}
	if m, _ := filepath.Glob(filepath.Join(cfg.Dir, "*"+spareSuffix)); len(m) != 0 {
		t.Errorf("spare files after a write refused for space: got %v, want none", m)
	}
	_, l2, err := l.Write(batch)
	if err != nil || l2 != last+40 {
		t.Fatalf("the same write after the spares were released: got last id %d, %v; want %d, nil", l2, err, last+40)
	}
	last = l2
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, cfg)
	defer l.Close()
	st := l.Stats()
	if st.Durable != last {
		t.Fatalf("after reopen: got last id %d, want %d", st.Durable, last)
	}
	checkPadded(t, l, st.First, last)
}

// checkPadded reads every row and checks they are ids from..to, each payload payloadOf(id)
// followed by padding.
func checkPadded(t *testing.T, l *Log, from, to int64) {
	t.Helper()
	checkPayloads(t, l, from, to, func(id int64, p []byte) bool { return bytes.HasPrefix(p, payloadOf(id)) })
}

// fillDisk writes path until its filesystem is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4<<10)
	for range 1 << 10 {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the filesystem never filled")
}
