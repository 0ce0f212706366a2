package seglog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
)

// cachedShare returns the share of path's pages between off and end that are in the page cache
// (mincore on a read-only mapping).
func cachedShare(t *testing.T, path string, off, end int64) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, int(end), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	off &^= pageSize - 1
	vec := make([]byte, (end-off+pageSize-1)/pageSize)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[off])), uintptr(end-off),
		uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(os.NewSyscallError("mincore", e))
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return float64(in) / float64(len(vec))
}

// cacheDir returns a temporary directory on a filesystem whose page cache can be dropped (not
// tmpfs, whose pages are the file's only copy).
func cacheDir(t *testing.T) string {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == unix.TMPFS_MAGIC {
		t.Skip("the temporary directory is on tmpfs, whose pages cannot be dropped; set TMPDIR to a disk")
	}
	return dir
}

// writeBig writes n records of 64 KiB in groups of 4 and waits until they are durable.
func writeBig(t *testing.T, l *Log, n int) {
	t.Helper()
	p := bytes.Repeat([]byte{'x'}, 64<<10)
	batch := make([]Entry, 4)
	for i := range batch {
		batch[i] = Entry{Signal: signal.Logs, Records: 1, Payload: p}
	}
	var last int64
	for range n / len(batch) {
		var err error
		if _, last, err = l.Write(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.WaitDurable(t.Context(), last); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseDropsDurablePages: the syncer drops the pages of durable records more than
// CacheBytes behind the newest and keeps the newest; with CacheBytes negative it keeps all.
func TestReleaseDropsDurablePages(t *testing.T) {
	for _, tt := range []struct {
		name       string
		cacheBytes int64
		wantOld    bool // the oldest records' pages still cached
	}{{"release", 1 << 20, false}, {"keep everything", -1, true}} {
		t.Run(tt.name, func(t *testing.T) {
			l := openLog(t, Config{Dir: cacheDir(t), CacheBytes: tt.cacheBytes})
			defer l.Close()
			writeBig(t, l, 128) // 8 MiB
			path, end := l.Segments()[0].Path, l.Segments()[0].Bytes
			if tt.wantOld {
				if got := cachedShare(t, path, 0, 4<<20); got < 0.9 {
					t.Fatalf("oldest 4 MiB: %.0f%% cached, want all", got*100)
				}
			} else {
				polltest.Until(t, "the oldest 4 MiB dropped from the page cache", func() bool {
					return cachedShare(t, path, 0, 4<<20) < 0.1
				})
			}
			if got := cachedShare(t, path, end-512<<10, end); got < 0.9 {
				t.Errorf("newest 512 KiB: %.0f%% cached, want all", got*100)
			}
			// Released records read back are dropped again once read.
			checkPayloads(t, l, 1, 128, func(_ int64, p []byte) bool { return len(p) == 64<<10 })
			if got := cachedShare(t, path, 0, 4<<20); !tt.wantOld && got > 0.1 {
				t.Errorf("oldest 4 MiB after a Reader read them: %.0f%% cached, want none", got*100)
			}
		})
	}
}

// TestReleaseSealedSegment: a sealed segment's pages go when the syncer retires its descriptor.
func TestReleaseSealedSegment(t *testing.T) {
	l := openLog(t, Config{Dir: cacheDir(t), SegmentBytes: 2 << 20})
	defer l.Close()
	writeBig(t, l, 48) // 3 MiB: one roll
	segs := l.Segments()
	if len(segs) < 2 {
		t.Fatalf("segments: got %d, want 2", len(segs))
	}
	writeBig(t, l, 4) // the syncer closes retired descriptors before its next fsync
	polltest.Until(t, "the sealed segment dropped from the page cache", func() bool {
		return cachedShare(t, segs[0].Path, 0, segs[0].Bytes) < 0.1
	})
}

// TestRecycledSegmentReadAhead: in a recycled segment, whose pages were dropped, the writer has
// the kernel read the blocks ahead of the records into the page cache, so that a write ending
// inside a page need not read it first.
func TestRecycledSegmentReadAhead(t *testing.T) {
	dir := cacheDir(t)
	l := openLog(t, Config{Dir: dir, SegmentBytes: 4 << 20, Spares: 1})
	defer l.Close()
	writeBig(t, l, 80) // 5 MiB: one roll
	first := l.Segments()[0]
	if _, _, err := l.DeleteThrough(first.Last); err != nil {
		t.Fatal(err)
	}
	writeBig(t, l, 64) // rolls into the spare
	segs := l.Segments()
	last := segs[len(segs)-1]
	if filepath.Base(last.Path) == filepath.Base(first.Path) || l.Stats().Spares != 0 {
		t.Fatalf("segments %+v, spares %d: want the spare recycled", segs, l.Stats().Spares)
	}
	ahead := min(last.Bytes+(1<<20), 4<<20)
	polltest.Until(t, "the recycled segment's next MiB read ahead", func() bool {
		return cachedShare(t, last.Path, last.Bytes, ahead) > 0.9
	})
}
