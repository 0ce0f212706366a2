package sqlitec

import "errors"

// QueryRows prepares query, runs it once and calls row with each row it returns, until the rows
// end or row returns an error, which QueryRows returns: for one-off reads (a state row, a scan
// step), not for hot paths, which prepare once.
func (c *Conn) QueryRows(query string, row func(r *Rows) error) (err error) {
	st, err := c.Prepare(query)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	rows, err := st.Query()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for {
		ok, err := rows.Next()
		if err != nil || !ok {
			return err
		}
		if err := row(rows); err != nil {
			return err
		}
	}
}
