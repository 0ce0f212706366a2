package query

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
)

// BenchmarkLogSearchPhrase searches 131,072 logs for terms of one and of two words. Every body
// holds "disk" and "full" apart ("disk usage on /dev/sda1 is at 91%, full GC took 12ms"); 1 in
// 4,096 holds the phrase "disk full". The trigrams that span the phrase's space ("k f", " fu")
// are what make it selective: an index of the groups' distinct words alone (tried, see
// docs/benchmarks/store.md) read 5,378 candidates for it where this reads 22. candidates/op
// reports how many groups (and rows) the newest-first walk read for a page of 20:
//
//	go test -run '^$' -bench LogSearchPhrase -count 5 ./internal/query
func BenchmarkLogSearchPhrase(b *testing.B) {
	st := openStoreDir(b, b.TempDir())
	defer closeStore(b, st)
	const n, per = 1 << 17, 1024
	base := time.Now().Add(-time.Hour)
	for i := 0; i < n; i += per {
		logs := make([]querytest.LogSpec, per)
		for j := range logs {
			body := fmt.Sprintf("disk usage on /dev/sda%d is at %d%%, full GC took %dms", (i+j)%7, (i+j)%100, (i+j)%50)
			if (i+j)%4096 == 0 {
				body = fmt.Sprintf("write %d failed: disk full", i+j)
			}
			logs[j] = querytest.LogSpec{Service: "svc", Sev: 9, Body: body, At: base.Add(time.Duration(i+j) * time.Millisecond)}
		}
		querytest.AppendLogs(b, st, logs...)
	}
	querytest.WaitProjected(b, st)
	for _, term := range []string{"disk full", "failed", "sda3 is"} {
		b.Run(term, func(b *testing.B) {
			r := NewReader(st.ReadDB())
			q := LogQuery{LogFilter: LogFilter{Q: term}, Limit: 20}
			for b.Loop() {
				if _, _, err := r.Logs(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
			reportCandidates(b, r, q)
		})
	}
}
