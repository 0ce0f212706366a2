package ingestsrv

import (
	"encoding/binary"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/store"
)

// TestKill9BulkTornTail SIGKILLs a child server under bulk load (16 clients posting
// 1,000-record log requests), then tears the raw log's last segment as a crash in the middle of
// a write would (a record's header and part of its payload after the last whole record, never
// acknowledged), and restarts on the same data directory: the store opens, cuts the torn tail,
// and every record answered 200 is projected and queryable; the restarted server takes more.
func TestKill9BulkTornTail(t *testing.T) {
	dir, res := kill9UnderLoad(t, 16, 200, 1000, 20)
	end := tearRawTail(t, filepath.Join(dir, store.RawDirName))
	ts := startServer(t, Config{Config: store.Config{Dir: dir}}) // restart: the store must open and cut the tail
	if got := segmentEnd(t, ts.Store()); got != end {
		t.Errorf("after restart the last segment's records end at %d, want %d (the torn record cut)", got, end)
	}
	waitProjected(t, ts.Store())
	projected := projectedSeqs(t, ts.Store())
	if missing := firstMissing(res.acked, projected); missing != nil {
		if _, extra := missing.(string); !extra {
			t.Fatalf("record %v was answered 200 but is not stored after kill -9 and a torn tail (acked %d, projected %d)",
				missing, len(res.acked), len(projected))
		}
	}
	body, _ := otlptest.Logs(1<<40, 1000).MarshalProto()
	wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", body), http.StatusOK)
}

// tearRawTail writes, after the last whole record of the raw log in dir, a record header that
// promises 4,000 bytes and 1,000 bytes of them, and returns the offset it wrote at.
func tearRawTail(t *testing.T, dir string) int64 {
	t.Helper()
	l, err := seglog.Open(seglog.Config{Dir: dir, Sync: seglog.SyncOff})
	if err != nil {
		t.Fatalf("open the raw log after kill -9: %v", err)
	}
	segs := l.Segments()
	last := segs[len(segs)-1]
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	torn := make([]byte, 32+1000)
	binary.LittleEndian.PutUint32(torn[0:], 4000)
	binary.LittleEndian.PutUint64(torn[8:], uint64(last.Last+1))
	for i := 32; i < len(torn); i++ {
		torn[i] = byte(i)
	}
	f, err := os.OpenFile(last.Path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(torn, last.Bytes); err != nil {
		t.Fatal(err)
	}
	return last.Bytes
}

// segmentEnd returns the end of the records of st's last raw segment.
func segmentEnd(t *testing.T, st *store.Store) int64 {
	t.Helper()
	segs := st.RawSegments()
	return segs[len(segs)-1].Bytes
}
