package query

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/otelbench/otelbench/internal/store"
)

// reportCandidates reports the candidates the blocks plan reads for substring search q (rows,
// or a group with none passing) as candidates/op.
func reportCandidates(b *testing.B, r *Reader, q LogQuery) {
	b.Helper()
	snap, err := r.blocks.refresh(context.Background(), r.db)
	if err != nil {
		b.Fatal(err)
	}
	_, walked, err := r.logsByBlocks(context.Background(), &q, snap, textMatch(trigramQuery(q.Q)),
		q.baseWhere(nil), `l.body LIKE ? ESCAPE '\'`, []any{likeContains(q.Q)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(walked), "candidates/op")
}

// BenchmarkLogSearchData measures the blocks plan beside the selectivity plan on a real data
// directory (scripts/bench-query.sh with DATA=dir leaves one), in process, without HTTP:
//
//	OTELBENCH_QUERY_DATA=/tmp/qdata go test -run '^$' -bench LogSearchData -count 5 ./internal/query
//
// Skipped without the variable. The directory must have this build's schema version.
func BenchmarkLogSearchData(b *testing.B) {
	dir := os.Getenv("OTELBENCH_QUERY_DATA")
	if dir == "" {
		b.Skip("OTELBENCH_QUERY_DATA is not set")
	}
	st, err := store.Open(context.Background(), store.Config{Dir: dir, NoProjection: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer closeStore(b, st)
	for _, term := range []string{"timeout", "quokka"} {
		for _, plan := range []string{"blocks", "selectivity"} {
			b.Run(term+"/"+plan, func(b *testing.B) {
				r := NewReader(st.ReadDB())
				r.noBlocks = plan == "selectivity"
				q := LogQuery{LogFilter: LogFilter{Q: term}, Limit: 100}
				for b.Loop() {
					p, _, err := r.Logs(context.Background(), q)
					if err != nil || len(p.Logs) != 100 {
						b.Fatalf("%d logs, %v", len(p.Logs), err)
					}
				}
				if plan == "blocks" {
					reportCandidates(b, r, q)
				}
			})
		}
	}
	b.Run("services/summary", func(b *testing.B) {
		r := NewReader(st.ReadDB())
		for b.Loop() {
			if _, err := r.Services(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("services/aggregate", func(b *testing.B) { // the peer: what Services ran before
		r := NewReader(st.ReadDB())
		for b.Loop() {
			servicesSlow(b, r)
		}
	})
}
