package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrent writes from several goroutines while reading (run with -race): nothing is
// lost and every read is whole lines.
func TestConcurrent(t *testing.T) {
	var b Buffer
	const writers, lines = 4, 500
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range lines {
				if _, err := b.Write([]byte("line\n")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 100 {
		if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
			t.Fatalf("read a partial write: %q", s[max(0, len(s)-10):])
		}
	}
	wg.Wait()
	if got, want := strings.Count(b.String(), "line\n"), writers*lines; got != want {
		t.Errorf("got %d lines, want %d", got, want)
	}
}
