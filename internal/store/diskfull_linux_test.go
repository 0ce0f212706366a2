package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/sqlitec"
	"github.com/otelbench/otelbench/internal/tmpfstest"
)

// TestDiskFull fills a real 2 MiB tmpfs: every Append either returns nil and its record is there
// after reopening, or returns an error (ErrDiskFull once space runs out); after space is freed,
// appends succeed again and the database passes integrity_check.
func TestDiskFull(t *testing.T) {
	// Reserve space to free later, so the test can show recovery.
	mnt, freeSpace := tmpfstest.MountReserved(t, "2m", 512<<10)
	dir := filepath.Join(mnt, "data")
	// Segments of 256 KiB: the raw log rolls several times while the disk fills, and a roll
	// that cannot zero-fill its new segment fails with ErrDiskFull like a write.
	cfg := Config{Dir: dir, Logger: quietLogger, rawSegmentBytes: 256 << 10}
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var acked []string
	diskFull := 0
	payload := func(i int) (string, []byte) { return noisyLogs(t, rng, fmt.Sprintf("full-%d-", i)) }
	for i := 0; i < 3000 && diskFull < 20; i++ {
		body, b := payload(i)
		err := s.Append(context.Background(), signal.Logs, b, 1)
		switch {
		case err == nil:
			acked = append(acked, body)
		case errors.Is(err, ErrDiskFull):
			diskFull++
		default:
			t.Logf("append %d: non-disk-full error: %v", i, err)
		}
	}
	if diskFull == 0 {
		t.Fatalf("the disk never filled after %d appends", len(acked))
	}
	t.Logf("%d appends acked, %d failed with ErrDiskFull", len(acked), diskFull)
	freeSpace()
	body, b := payload(-1)
	if err := s.Append(context.Background(), signal.Logs, b, 1); err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	acked = append(acked, body)
	if err := s.Close(context.Background()); err != nil {
		t.Logf("close: %v", err)
	}

	s, err = Open(context.Background(), Config{Dir: dir, NoProjection: true, rawSegmentBytes: 256 << 10})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close(context.Background())
	checkIntegrity(t, s)
	// Every acked record is in the raw log, in order, and its payload decodes to its body.
	i := 0
	err = s.ScanRaw(func(r rawlog.Row) error {
		ld, err := (&logsUnmarshaler).UnmarshalLogs(r.Payload)
		if err != nil {
			return fmt.Errorf("raw row %d: %w", r.ID, err)
		}
		if got := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str(); i < len(acked) && got != acked[i] {
			t.Errorf("raw row %d: body %.20q, want %.20q", r.ID, got, acked[i])
		}
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != len(acked) {
		t.Errorf("raw rows after reopen: got %d, want %d acked", i, len(acked))
	}
}

// TestDiskFullProjectorConn fills a real tmpfs through the projector's kind of connection
// (project.Conn, sqlitec): the error is ErrDiskFull to the store, the transaction rolls back, the
// database stays intact, and once space is freed the same connection commits again.
func TestDiskFullProjectorConn(t *testing.T) {
	mnt, freeSpace := tmpfstest.MountReserved(t, "1m", 256<<10)
	c, err := project.OpenConn(filepath.Join(mnt, "t.db"), "journal_mode = wal", "synchronous(normal)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	noise := make([]byte, 8<<10)
	rng := rand.New(rand.NewPCG(3, 4))
	insert := func(c *sqlitec.Conn, rows int) error {
		if err := c.Exec("BEGIN IMMEDIATE"); err != nil {
			return err
		}
		st, err := c.Prepare(`INSERT INTO t(b) VALUES (?)`)
		if err != nil {
			_ = c.Exec("ROLLBACK")
			return err
		}
		defer st.Close()
		for range rows {
			for j := range noise {
				noise[j] = byte(rng.Uint32())
			}
			if _, err := st.Exec(noise); err != nil {
				_ = c.Exec("ROLLBACK")
				return err
			}
		}
		if err := c.Exec("COMMIT"); err != nil {
			_ = c.Exec("ROLLBACK")
			return err
		}
		return nil
	}
	var committed int64
	err = c.Do(func(c *sqlitec.Conn) error {
		if err := c.Exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)`); err != nil {
			return err
		}
		for range 200 { // 200 × 10 × 8 KiB: far past the 1 MiB disk
			if err := insert(c, 10); err != nil {
				return err
			}
			committed += 10
		}
		return nil
	})
	if err == nil {
		t.Fatal("1 MiB took 16 MiB of rows")
	}
	if !diskfull.Is(err) || !errors.Is(diskfull.Classify("project", err), ErrDiskFull) {
		t.Fatalf("disk full: %v, want ErrDiskFull", err)
	}
	freeSpace()
	count := func() (n int64) {
		t.Helper()
		err := c.Do(func(c *sqlitec.Conn) (err error) {
			n, err = c.QueryInt64(`SELECT count(*) FROM t`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != committed {
		t.Errorf("%d rows after the failed transaction, want the %d committed", n, committed)
	}
	if err := c.Do(func(c *sqlitec.Conn) error { return insert(c, 2) }); err != nil {
		t.Fatalf("insert after freeing space: %v", err)
	}
	if n := count(); n != committed+2 {
		t.Errorf("%d rows, want %d", n, committed+2)
	}
	err = c.Do(func(c *sqlitec.Conn) error {
		st, err := c.Prepare(`PRAGMA integrity_check`)
		if err != nil {
			return err
		}
		defer st.Close()
		rows, err := st.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		if ok, err := rows.Next(); err != nil || !ok || rows.Text(0) != "ok" {
			return fmt.Errorf("integrity_check: %q %v", rows.Text(0), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// noisyLogs returns a one-record logs request whose body is prefix and 2 KiB of random hex, and
// the body: incompressible and large, so a small disk fills in a few hundred appends.
func noisyLogs(t *testing.T, rng *rand.Rand, prefix string) (string, []byte) {
	t.Helper()
	noise := make([]byte, 2048)
	for j := range noise {
		noise[j] = "0123456789abcdef"[rng.IntN(16)]
	}
	body := prefix + string(noise)
	ld := makeLogs("disk", "", 1)
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr(body)
	b, err := logsMarshaler.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return body, b
}
