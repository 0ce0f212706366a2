package store

import (
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/otelbench/otelbench/internal/schema"
)

// wantLogText computes from the logs table what log_text must index: for every group of
// 1<<schema.LogTextShift ids, the distinct 3-character windows of each of its bodies (none across two
// bodies), lower-cased. Rows are "group trigram", sorted.
func wantLogText(t *testing.T, db *sql.DB) []string {
	t.Helper()
	seen := map[int64]map[string]bool{}
	var out []string
	for _, r := range queryRows(t, db, `SELECT id, body FROM logs WHERE body != '' ORDER BY id`) {
		var id int64
		fmt.Sscan(r[0], &id)
		g := id >> schema.LogTextShift
		if seen[g] == nil {
			seen[g] = map[string]bool{}
		}
		text := []rune(strings.ToLower(r[1]))
		for i := 0; i+3 <= len(text); i++ {
			if tri := string(text[i : i+3]); !seen[g][tri] {
				seen[g][tri] = true
				out = append(out, fmt.Sprintf("%d %q", g, tri))
			}
		}
	}
	slices.Sort(out)
	return out
}

// gotLogText reads what log_text holds, through an fts5vocab table over it, each token decoded
// back to its trigram (a token that is not the hex of one is kept as it is, and differs).
func gotLogText(t *testing.T, db *sql.DB) []string {
	t.Helper()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.log_text_vocab USING fts5vocab(main, log_text, instance)`); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range queryRows(t, db, `SELECT doc, term FROM temp.log_text_vocab`) {
		term := r[1]
		if b, err := hex.DecodeString(term); err == nil && utf8.RuneCount(b) == 3 {
			term = string(b)
		}
		out = append(out, fmt.Sprintf("%s %q", r[0], term))
	}
	slices.Sort(out)
	return out
}

func checkLogText(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the temp vocabulary table lives on one connection
	want, got := wantLogText(t, db), gotLogText(t, db)
	if len(want) == 0 {
		t.Fatal("no text to index: the test data is wrong")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log_text (-from logs +index):\n%s", diff)
	}
	if _, err := db.Exec(`INSERT INTO log_text(log_text, rank) VALUES ('integrity-check', 0)`); err != nil {
		t.Errorf("log_text integrity-check: %v", err)
	}
}

// appendTextData appends requests of a few logs each with mixed-case, empty and repeated
// bodies, so that one-raw-row slices end in the middle of groups.
func appendTextData(t *testing.T, s *Store, round int) {
	t.Helper()
	for req := range 7 {
		ld := makeLogs("svc", fmt.Sprintf("Round%d Req%d", round, req), 5+req*3)
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := range lrs.Len() {
			switch i % 5 {
			case 1:
				lrs.At(i).Body().SetStr("") // no text
			case 3:
				lrs.At(i).Body().SetStr("GET /api/cart status=200") // the same text in many groups
			case 4: // repeated words, other whitespace, one-character and non-ASCII words at spaces
				lrs.At(i).Body().SetStr(fmt.Sprintf("retry\tGET\n/api/cart  r%d retry GET/api\r\n é ün çé x", req))
			}
		}
		appendLogs(t, s, ld)
	}
	waitProjected(t, s)
}

// TestLogTextIndex checks log_text, term by term, against the bodies in the logs table after
// slices that end inside groups: a group completed by a later slice is replaced whole, never
// indexed twice or left partial.
func TestLogTextIndex(t *testing.T) {
	s := openTest(t, Config{ProjectSlice: 1, Sync: SyncOff})
	for round := range 3 {
		appendTextData(t, s, round)
		checkLogText(t, s.TelemetryPath())
	}
	if n := countRows(t, s, "logs"); n < 4<<schema.LogTextShift {
		t.Errorf("only %d logs: the data should span several groups", n)
	}
}
