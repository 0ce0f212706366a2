package sqlitec

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The versions this package was last verified against. It calls modernc.org/sqlite/lib's
// translated C API directly, below the driver's documented surface, so a bump is verified by
// hand, not assumed: see reverify.
const (
	pinnedSQLiteModule = "v1.62.0" // modernc.org/sqlite
	pinnedLibc         = "v1.80.1" // modernc.org/libc, the one modernc.org/sqlite v1.62.0 requires
	pinnedSQLite       = "3.54.1"  // the SQLite it translates
)

// reverify is what to check before moving a pin.
const reverify = `sqlitec drives modernc.org/sqlite/lib below the driver: before moving a pin, check that
 - modernc.org/libc is exactly the version the new modernc.org/sqlite's go.mod requires
   (the translated code and libc are released in lockstep; a mismatch corrupts memory);
 - the Xsqlite3_* functions it calls keep their signatures and the library is still
   configured by the driver's init (multi-thread mode: connections opened NOMUTEX);
 - libc.TLS.Alloc/Free, libc.Xmalloc/Xfree, libc.CString and libc.GoBytes behave the same;
 - SQLITE_STATIC bindings into C memory and sqlite3_close_v2 keep SQLite's documented semantics;
then run go test -race ./internal/sqlitec ./internal/store and BenchmarkProject (internal/store)
before and after, and update the pins in pin_test.go.`

// TestPinnedVersions fails when go.mod or the linked library moves from the versions above.
func TestPinnedVersions(t *testing.T) {
	mods := requiredVersions(t)
	tests := []struct{ what, got, want string }{
		{"modernc.org/sqlite in go.mod", mods["modernc.org/sqlite"], pinnedSQLiteModule},
		{"modernc.org/libc in go.mod", mods["modernc.org/libc"], pinnedLibc},
		{"SQLite compiled in (SQLITE_VERSION)", sqlite3.SQLITE_VERSION, pinnedSQLite},
		{"SQLite linked (sqlite3_libversion)", libVersion(), pinnedSQLite},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q.\n%s", tt.what, tt.got, tt.want, reverify)
		}
	}
}

// requiredVersions reads the require lines of the module's go.mod, found above the package.
func requiredVersions(t *testing.T) map[string]string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mods := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && strings.HasPrefix(fields[1], "v") {
			mods[fields[0]] = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return mods
}

// libVersion is the version of the SQLite library linked in, from the library itself.
func libVersion() string {
	tls := libc.NewTLS()
	defer tls.Close()
	return libc.GoString(sqlite3.Xsqlite3_libversion(tls))
}
