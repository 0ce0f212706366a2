package dashboard

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/query"
)

// Attach mounts the JSON query API (/api/v1/...) and the dashboard (/ui/,
// with / redirecting there) over db, the store's read pool, using mount
// (ingestsrv's Server.Mount, so its auth applies). notify is the store's
// ProjectedNotify. It returns the live tail's run loop: run it until the
// server stops; it ends every open tail when ctx is done, so a graceful
// HTTP shutdown does not wait on streams.
func Attach(db *sql.DB, notify func() (<-chan struct{}, func()), mount func(string, http.Handler), logger *slog.Logger) (func(context.Context) error, error) {
	api := query.New(query.NewReader(db), query.Config{Logger: logger, Tail: query.TailConfig{Notify: notify}})
	d, err := New(api.Reader(), Config{Logger: logger, LogoutPath: ingestsrv.LogoutPath, SessionCookie: ingestsrv.SessionCookie})
	if err != nil {
		return nil, err
	}
	api.MountOn(mount)
	d.MountOn(mount)
	mount("GET /{$}", http.RedirectHandler(d.cfg.Base+"/", http.StatusFound))
	return api.Run, nil
}
