package sqlitec

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestQueryRows: every row reaches the callback in order, an error of the callback stops the
// rows and comes back, a query that does not prepare fails, and the connection's statements are
// all closed afterwards (a later Close finalizes none).
func TestQueryRows(t *testing.T) {
	c, _ := openTest(t)
	if err := c.Exec(`INSERT INTO t(i, s) VALUES (1, 'a'), (2, 'b'), (3, 'c')`); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	tests := []struct {
		name    string
		query   string
		stopAt  int64 // the callback fails at this i
		want    []string
		wantErr string
	}{
		{name: "all rows", query: `SELECT i, s FROM t ORDER BY i`, want: []string{"1a", "2b", "3c"}},
		{name: "no rows", query: `SELECT i, s FROM t WHERE i > 3`},
		{name: "callback stops", query: `SELECT i, s FROM t ORDER BY i`, stopAt: 2, want: []string{"1a", "2b"}, wantErr: "stop"},
		{name: "bad query", query: `SELECT nope FROM t`, wantErr: "no such column"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := c.QueryRows(tc.query, func(r *Rows) error {
				got = append(got, fmt.Sprint(r.Int64(0), r.Text(1)))
				if r.Int64(0) == tc.stopAt {
					return stop
				}
				return nil
			})
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error: got %v, want %q", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rows: got %q, want %q", got, tc.want)
			}
			if n := len(c.stmts); n != 0 {
				t.Errorf("%d statements left open, want 0", n)
			}
		})
	}
}
