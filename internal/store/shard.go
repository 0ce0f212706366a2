package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/signal"
)

// Layouts. A data directory holds the raw log and one or two projected databases, each with a
// projector of its own (a shard):
//
//   - one file, the default: telemetry.db takes every signal.
//   - two files (Config.TracesFile, serve's --traces-file): telemetry.db takes logs and metrics,
//     traces.db spans. Catch-up is bound by the one thread that commits a slice, which SQLite
//     allows one per database file; a second file lets a second projector commit beside it.
//     After a mixed load on this project's 2-vCPU machine catch-up ran 6–17% faster (medians
//     of alternated runs), and peak RSS rose from ~89 to 113–120 MB, past serve's 100 MB
//     budget: both projectors hold a slice and a page cache, where the one held one of
//     each. With the caches and slices halved RSS stayed at 94–98 MB and catch-up gained
//     nothing (docs/benchmarks/store.md, bench-serve-ab.sh). On that machine the host took ~30%
//     of the vCPUs' time (steal in /proc/stat), so two projectors competed for ~1.4 CPUs. Once each
//     projector prefetched, the layout became the default (c61b335: +15%, ~15 MB).
//
// The query side sees one schema either way: ReadDB attaches traces.db as "traces", and its
// tables exist in no other file, so queries name them unqualified. What both files hold
// (resources, scopes, projection_state, summary_state, service_counts) resolves to
// telemetry.db's; service_counts is the one of them a query reads, and it reads both (query's
// Services).

// TracesFileName is the database of a two-file data directory's trace tables, inside Config.Dir.
const TracesFileName = "traces.db"

// maxShards bounds the projected databases of a data directory.
const maxShards = 2

// shard is one projected database file and what its projector takes from the raw log.
type shard struct {
	index   int    // in Store.shards, and in the counters' per-shard atomics
	name    string // "telemetry" or "traces"
	path    string
	parts   schema.Parts
	signals rawlog.Signals // the signals whose rows it projects
	others  rawlog.Signals // the signals the other shards project (takes)
	db      *sql.DB        // Open's connection: journal mode, schema, state; closed when Open returns
	conn    *project.Conn  // the projector's connection, shared with retention
	raw     *rawlog.Reader // the projector's reader of the raw log (rawlog)
	wake    chan struct{}  // nudged after each group commit (wakeProjector)
	done    chan struct{}  // closed when its projector goroutine returned
}

// filter says which raw rows sh's projector takes: those of its signals, and, in the first
// shard, a row whose signal no other shard takes even if it is no signal at all (a damaged
// row), so that exactly one projector passes it to stageRow, which logs it and skips it, and
// counts it out of the lag.
func (sh *shard) filter() rawlog.Filter {
	if sh.index > 0 {
		return rawlog.Filter{Only: sh.signals}
	}
	return rawlog.Filter{Except: sh.others}
}

// takes reports whether sh's projector takes raw rows of sig (filter).
func (sh *shard) takes(sig signal.Signal) bool { return sh.filter().Takes(sig) }

// tracesFile reports whether the data directory in dir keeps its trace tables in traces.db:
// it has a traces.db, or it has no telemetry.db with spans yet and want asks for it.
func tracesFile(ctx context.Context, dir string, want bool) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, TracesFileName)); err == nil {
		return true, nil
	} else if !os.IsNotExist(err) {
		return false, fmt.Errorf("store: look for %s: %w", TracesFileName, err)
	}
	if !want {
		return false, nil
	}
	path := filepath.Join(dir, FileName)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return true, nil
	}
	db, err := openOne(ctx, dsn(path, append(commonPragmas, "query_only(true)")...))
	if err != nil {
		return false, diskfull.Classify("open telemetry database", err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'spans'`).Scan(&n); err != nil {
		return false, diskfull.Classify("read the telemetry database's tables", err)
	}
	return n == 0, nil
}
