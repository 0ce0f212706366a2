package query

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// SignalCount is one service's records of one signal.
type SignalCount struct {
	Records          int64 `json:"records"`
	LastSeenUnixNano int64 `json:"last_seen_unix_nano,omitempty"`
}

// Service is one service.name with its record counts per signal. Records
// without a service.name are listed under "".
type Service struct {
	Name    string      `json:"name"`
	Logs    SignalCount `json:"logs"`
	Spans   SignalCount `json:"spans"`
	Metrics SignalCount `json:"metrics"` // metric streams; last seen is the newest point
}

// ServicesTTL is how long a computed service list is reused: the counts
// are range scans over every stored record (seconds at millions of rows),
// and the dashboard's home page asks for them on every load.
const ServicesTTL = 10 * time.Second

// Services lists services with per-signal counts, at most ServicesTTL old.
func (r *Reader) Services(ctx context.Context) ([]Service, error) {
	r.svcMu.Lock() // one computation at a time; waiters reuse its result
	defer r.svcMu.Unlock()
	if r.svcList != nil && time.Since(r.svcAt) < ServicesTTL {
		return r.svcList, nil
	}
	s, err := r.services(ctx)
	if err != nil {
		return nil, err
	}
	r.svcList, r.svcAt = s, time.Now()
	return s, nil
}

// services computes the list. Each count is one range scan of a
// (service, time) index, so the cost grows with the stored rows.
func (r *Reader) services(ctx context.Context) ([]Service, error) {
	byName := map[string]*Service{}
	get := func(n string) *Service {
		s, ok := byName[n]
		if !ok {
			s = &Service{Name: n}
			byName[n] = s
		}
		return s
	}
	queries := []struct {
		sql  string
		pick func(*Service) *SignalCount
	}{
		{`SELECT coalesce(service,''), count(*), coalesce(max(time_unix_nano),0) FROM logs GROUP BY service`,
			func(s *Service) *SignalCount { return &s.Logs }},
		{`SELECT coalesce(service,''), count(*), coalesce(max(start_time_unix_nano),0) FROM spans GROUP BY service`,
			func(s *Service) *SignalCount { return &s.Spans }},
		{`SELECT coalesce(service,''), count(*), 0 FROM metrics GROUP BY service`,
			func(s *Service) *SignalCount { return &s.Metrics }},
	}
	for _, q := range queries {
		rows, err := r.db.QueryContext(ctx, q.sql)
		if err != nil {
			return nil, fmt.Errorf("query services: %w", err)
		}
		for rows.Next() {
			var name string
			var c SignalCount
			if err := rows.Scan(&name, &c.Records, &c.LastSeenUnixNano); err != nil {
				rows.Close()
				return nil, fmt.Errorf("scan service: %w", err)
			}
			*q.pick(get(name)) = c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("query services: %w", err)
		}
	}
	out := make([]Service, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Service) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}
