package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
)

// attachConnector attaches traces.db as schema "traces" (the two-file layout) to every read
// connection.
type attachConnector struct {
	driver.Connector
	attach [][2]string // path, schema name
}

func (c attachConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("store: sqlite connection cannot exec")
	}
	for _, a := range c.attach {
		if _, err := ex.ExecContext(ctx, "ATTACH DATABASE ? AS "+a[1], []driver.NamedValue{{Ordinal: 1, Value: a[0]}}); err != nil {
			conn.Close()
			return nil, fmt.Errorf("attach %s database: %w", a[1], err)
		}
	}
	return conn, nil
}
