package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// Store is an open database. Its methods are safe for concurrent use.
type Store struct {
	cfg    Config
	path   string // telemetry.db
	rawDir string // the raw log's segments

	raw    *rawlog.Log // the raw log: queue, writer, durable waiter, pruning
	shards []*shard    // the projected databases, each with a connection its projector owns
	readDB *sql.DB     // telemetry.db with traces.db attached, read-only pool for queries

	stats counters

	subMu   sync.Mutex
	subs    map[int]chan struct{}
	nextSub int

	projectStop context.CancelFunc
	retain      retainState
	bound       diskBound
	pruneStop   context.CancelFunc
	pruneDone   chan struct{}
	closeOnce   sync.Once
	closeErr    error
	closeCtxErr error
	closed      atomic.Bool
}

// Open opens (creating if needed) the database in cfg.Dir, applies the schema, and starts the
// writer and projector goroutines. Close stops them.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: create data dir: %w", err)
	}
	s := &Store{
		cfg:       cfg,
		path:      filepath.Join(cfg.Dir, FileName),
		rawDir:    filepath.Join(cfg.Dir, RawDirName),
		subs:      map[int]chan struct{}{},
		pruneDone: make(chan struct{}),
	}
	if err := s.openDBs(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	if err := s.loadState(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	for _, sh := range s.shards {
		err := sh.db.Close()
		sh.db = nil
		if err != nil {
			s.closeDBs()
			return nil, diskfull.Classify("close "+sh.name+" setup connection", err)
		}
	}
	pruneDBs, err := s.openPruneDBs(ctx)
	if err != nil {
		s.closeDBs()
		return nil, err
	}
	s.raw.Start()
	pctx, cancel := context.WithCancel(context.Background())
	s.projectStop = cancel
	for _, sh := range s.shards {
		if cfg.NoProjection {
			close(sh.done)
		} else {
			s.startProjector(pctx, sh)
		}
	}
	wctx, wcancel := context.WithCancel(context.Background())
	s.pruneStop = wcancel
	if pruneDBs == nil {
		close(s.pruneDone)
	} else {
		go s.runPruneWatch(wctx, pruneDBs)
	}
	s.startRetainer()
	return s, nil
}

// openPruneDBs opens, when raw pruning is on, the prune watcher's own connection to each
// projected database: the checkpoint that makes the projection durable must not stall a
// projector or the writer.
func (s *Store) openPruneDBs(ctx context.Context) ([]*sql.DB, error) {
	if !s.pruneConfigured() {
		return nil, nil
	}
	var pruneDBs []*sql.DB
	for _, sh := range s.shards {
		db, err := openOne(ctx, dsn(sh.path, append(commonPragmas, "cache_size(-256)", "synchronous(full)")...))
		if err != nil {
			for _, db := range pruneDBs {
				db.Close()
			}
			return nil, diskfull.Classify("open prune watch", err)
		}
		pruneDBs = append(pruneDBs, db)
	}
	return pruneDBs, nil
}

// refuseRawDB fails when dir still holds raw.db, the raw database of earlier builds: its rows
// would be neither projected nor pruned, and the projected databases' marks count its ids.
func refuseRawDB(dir string) error {
	path := filepath.Join(dir, RawFileName)
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("store: %s holds %s, the raw database of an earlier otelbench: this build keeps "+
			"the raw log in segment files (%s/) and cannot read it; start serve on a new --data-dir, "+
			"or remove that data directory", dir, RawFileName, RawDirName)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: look for %s: %w", path, err)
	}
	return nil
}

// dsn builds a modernc.org/sqlite DSN for a database file with the given pragmas.
func dsn(path string, pragmas ...string) string {
	v := "file:" + uriPath(path) + "?_txlock=immediate"
	for _, p := range pragmas {
		v += "&_pragma=" + p
	}
	return v
}

// uriPath escapes what a SQLite URI filename reads specially in a path: '%' starts an escape,
// '?' the query (where the driver, too, looks for its parameters) and '#' the fragment. A data
// directory named "run#2" must not open the database "run".
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// addShard adds a projected database to the store (openDBs opens it) and tells the shards before
// it that it takes sigs.
func (s *Store) addShard(name, path string, ps schema.Parts, sigs rawlog.Signals) {
	for _, sh := range s.shards {
		sh.others |= sigs
	}
	s.shards = append(s.shards, &shard{
		index: len(s.shards), name: name, path: path, parts: ps, signals: sigs,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
	})
}

// openOne opens a single-connection pool (a connection owned by one goroutine).
func openOne(ctx context.Context, dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// commonPragmas apply to every connection. busy_timeout only matters for other processes (the
// sqlite3 CLI, say) holding locks: inside the process each database has one writing goroutine.
// Page caches (cache_size, KiB when negative) are sized per role to keep peak RSS under the
// 100 MB budget, and each cached page costs about twice its size in RSS: a page plus SQLite's
// header falls in the next power-of-two slab class of modernc.org/memory (8 KiB for a 4 KiB page,
// 16 KiB for an 8 KiB one). The projector updates indexes all over telemetry.db (2 MiB: under a
// mixed load SQLite's own memory measured 52 MB with 4 MiB and 33 MB with 512 KiB, and catch-up
// after the load ran as fast with 2 MiB as with 4; BenchmarkProject/logs/records=10 is ~2% slower
// at 1 MiB), and each read connection gets 2 MiB: queries read the OS's page cache well, and 4
// connections × 8 MiB let one big read (a 161,000-span trace) raise the server's RSS for good
// (docs/benchmarks/query.md, docs/benchmarks/serve.md).
var commonPragmas = schema.ConnPragmas

// projectorCheckpoint is the projector connection's automatic checkpoint threshold, given in
// bytes of WAL and set in pages of the file's own size (8 KiB since 8 KiB pages were adopted, 4 KiB
// in a file created before). At 32 MiB the projector copied the WAL into the database on its own
// thread about every second of catch-up, ~9% of its time. At 256 MiB it checkpoints an eighth as
// often, and each page a slice rewrites again and again (an index's newest leaves) is copied once
// per checkpoint: catch-up after a mixed load went from ~59k to ~70k records/s
// (docs/benchmarks/store.md). The cost is disk: while the projector writes without pause the
// prune watcher's PASSIVE checkpoints copy pages but cannot restart the WAL (new frames keep
// arriving behind them), so the WAL can run to ~256 MiB; its file is truncated back to 64 MiB
// when the WAL restarts (walLimitPragmas). Without the watcher (KeepRaw) nothing else
// checkpoints and the threshold stays 32 MiB.
func projectorCheckpoint(watcher bool, pageSize int64) (pages int64) {
	bytes := int64(32 << 20)
	if watcher {
		bytes = 256 << 20
	}
	return bytes / max(pageSize, 512)
}

// projectedPageSize is the page size of a new telemetry.db or traces.db. A projection slice's
// rows land in the newest leaves of a table and its indexes, so larger pages split less, keep
// the trees shallower and halve the WAL frames of a commit (each frame two pwrites, a header
// and its page): catch-up after a mixed load +13% (medians 77.0k → 87.3k records/s in 3
// alternated rounds) and peak RSS 86–88 → 77–79 MB. The query benchmarks did not move but
// logs-by-trace, whose 65 block seeks each search a bigger page (~0.83 → ~1.02 ms;
// docs/benchmarks/store.md, bench-serve-ab.sh). An 8 KiB page and SQLite's header fall in
// modernc.org/memory's 16 KiB slab class, as a 4 KiB one in the 8 KiB class: a cache of so
// many KiB costs the same RSS at either size. A file created with other pages keeps them.
const projectedPageSize = 8192

func (s *Store) openDBs(ctx context.Context) error {
	if err := refuseRawDB(s.cfg.Dir); err != nil {
		return err
	}
	var err error
	s.raw, err = rawlog.Open(rawlog.Config{Dir: s.rawDir, Sync: seglog.SyncMode(s.cfg.Sync), SegmentBytes: s.segmentBytes(),
		QueueRequests: s.cfg.QueueRequests, QueueBytes: s.cfg.QueueBytes, Prune: s.pruneConfigured(), Retention: s.cfg.RawRetention,
		Bound: rawBound{s}, OnDurable: s.rawDurable, Logger: s.cfg.Logger})
	if err != nil {
		return err
	}
	split, err := tracesFile(ctx, s.cfg.Dir, s.cfg.TracesFile)
	if err != nil {
		return err
	}
	if !split {
		s.addShard("telemetry", s.path, schema.LogsMetrics|schema.Traces, rawlog.AllSignals)
	} else {
		s.addShard("telemetry", s.path, schema.LogsMetrics, rawlog.SignalsOf(signal.Logs, signal.Metrics))
		s.addShard("traces", filepath.Join(s.cfg.Dir, TracesFileName), schema.Traces, rawlog.SignalsOf(signal.Traces))
	}
	s.stats.shards = len(s.shards)
	// The projected databases' commits need not be durable: projection is re-derived from raw,
	// and its rows and high-water mark commit atomically, so NORMAL loses at most the last
	// slices on power loss and they are projected again. cache_spill off: a slice's dirty pages
	// stay in the page cache until its commit, even past cache_size (a slice of 5,120 load-shaped
	// metric points dirties ~1,800 pages against the cache's 512). Spilled, each page went to the
	// WAL mid-transaction, was read back or rewritten in its frame when the slice changed it again,
	// and the commit recomputed the checksums of every frame after the first one rewritten (~5%
	// of the projector on metric points). The projector's slice bounds (project) limit what a slice
	// can dirty. The cost is memory: after TestProjectorSliceStaysInCache's slice of ~3 MiB the
	// cache holds 4.9 MB (sqlite3_db_status CACHE_USED) where spilling left 3.3 MB; the peak RSS
	// of a mixed load and its catch-up did not move (93.3 against 93.9 MB, docs/benchmarks/store.md).
	// Each projector has caches of its own: halved, two projectors gained nothing on one
	// (docs/benchmarks/store.md, bench-serve-ab.sh).
	for _, sh := range s.shards {
		if err := s.openShard(ctx, sh); err != nil {
			return err
		}
	}
	conn, err := sqlite.NewConnector(dsn(s.path, append(commonPragmas, "cache_size(-2048)", "query_only(true)")...))
	if err != nil {
		return fmt.Errorf("store: open read pool: %w", err)
	}
	ac := attachConnector{Connector: conn}
	if len(s.shards) > 1 {
		ac.attach = append(ac.attach, [2]string{s.shards[1].path, "traces"})
	}
	s.readDB = sql.OpenDB(ac)
	s.readDB.SetMaxOpenConns(s.cfg.ReadConns)
	s.readDB.SetMaxIdleConns(s.cfg.ReadConns)
	if err := s.readDB.PingContext(ctx); err != nil {
		return fmt.Errorf("store: open read pool: %w", err)
	}
	return nil
}

// openShard opens sh's database (journal mode, checkpoint threshold, schema), its projector's
// connection and its raw reader (openDBs explains the settings).
func (s *Store) openShard(ctx context.Context, sh *shard) error {
	var err error
	sh.db, err = openOne(ctx, dsn(sh.path, append(commonPragmas, "synchronous(normal)", "cache_size(-2048)", "cache_spill(false)")...))
	if err != nil {
		return diskfull.Classify("open "+sh.name+" database", err)
	}
	// page_size first: it takes effect only before the file's first write.
	if _, err := sh.db.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size = %d; PRAGMA journal_mode = wal", projectedPageSize)); err != nil {
		return diskfull.Classify("set "+sh.name+" journal mode", err)
	}
	var pageSize int64
	if err := sh.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		return diskfull.Classify("read "+sh.name+" page size", err)
	}
	checkpoint := s.walPages(projectorCheckpoint(s.pruneConfigured(), pageSize), pageSize)
	if _, err := sh.db.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", checkpoint)); err != nil {
		return diskfull.Classify("set "+sh.name+" checkpoint threshold", err)
	}
	if err := schema.Apply(ctx, sh.db, sh.parts); err != nil {
		return fmt.Errorf("open %s: %w", sh.path, err)
	}
	sh.conn, err = project.OpenConn(sh.path, append([]string{"synchronous(normal)", fmt.Sprintf("wal_autocheckpoint(%d)", checkpoint), "cache_size(-2048)", "cache_spill(false)"},
		walLimitPragmas(checkpoint, pageSize)...)...)
	if err != nil {
		return diskfull.Classify("open "+sh.name+" database for projection", err)
	}
	sh.raw = s.raw.Reader(sh.filter())
	return nil
}

func (s *Store) closeDBs() error {
	var errs []error
	dbs := []*sql.DB{s.readDB}
	for _, sh := range s.shards {
		dbs = append(dbs, sh.db)
		errs = append(errs, sh.raw.Close(), sh.conn.Close())
	}
	for _, db := range dbs {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if s.raw != nil {
		errs = append(errs, s.raw.Close())
	}
	return errors.Join(errs...)
}

// ReadDB returns the read-only connection pool for queries. It must not be closed by the caller
// and is invalid after Close.
func (s *Store) ReadDB() *sql.DB { return s.readDB }

// RawDir returns the directory of the raw log's segment files.
func (s *Store) RawDir() string { return s.rawDir }

// TelemetryPath returns the relational database's file path (telemetry.db).
func (s *Store) TelemetryPath() string { return s.path }

// Close refuses new appends (ErrClosed), commits everything already queued, stops the projector
// after its current slice, and closes the database. Every queued append is answered before Close
// returns. If ctx ends before the queue is drained, the requests not yet in a commit are failed
// with ErrClosed, the commit in progress finishes, and Close returns ctx.Err() after closing the
// database: no goroutine outlives Close. Calling Close again returns the first call's result.
func (s *Store) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeCtxErr = s.raw.Drain(ctx)
		s.projectStop()
		for _, sh := range s.shards {
			<-sh.done
		}
		s.pruneStop()
		<-s.pruneDone
		s.stopRetainer()
		s.closeErr = s.closeDBs()
		s.subMu.Lock()
		for _, ch := range s.subs {
			close(ch)
		}
		s.subs = nil
		s.subMu.Unlock()
	})
	if s.closeErr != nil {
		return fmt.Errorf("store: close: %w", s.closeErr)
	}
	return s.closeCtxErr
}

// ProjectedNotify subscribes to projection progress: the channel receives (without blocking the
// projectors; signals coalesce) after each projection slice commits, in either projected
// database (a slice of traces.db may only pass rows of other signals by), and is closed by Close. The
// returned func unsubscribes and is idempotent.
func (s *Store) ProjectedNotify() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.subMu.Lock()
	if s.subs == nil {
		s.subMu.Unlock()
		close(ch)
		return ch, func() {}
	}
	id := s.nextSub
	s.nextSub++
	s.subs[id] = ch
	s.subMu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.subMu.Lock()
			if c, ok := s.subs[id]; ok {
				delete(s.subs, id)
				close(c)
			}
			s.subMu.Unlock()
		})
	}
}

func (s *Store) notifyProjected() {
	s.subMu.Lock()
	for _, ch := range s.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	s.subMu.Unlock()
}
