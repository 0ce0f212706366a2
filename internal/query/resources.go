package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// resourceBatch is the most keys one resources query binds (SQLite's limit on
// host parameters is 32,766; a trace can name thousands of resources).
const resourceBatch = 500

// resourceAttrs calls fn with the key and the attributes of every resource of
// schema whose col ("id" or "hash") is one of keys. A resource without
// attributes ("{}") gets attrs "", as the answers omit it.
func (r *Reader) resourceAttrs(ctx context.Context, schema, col string, keys []any, fn func(key any, attrs string)) error {
	for len(keys) > 0 {
		batch := keys[:min(len(keys), resourceBatch)]
		keys = keys[len(batch):]
		rows, err := r.db.QueryContext(ctx, `SELECT `+col+`, attributes FROM `+schema+`.resources WHERE `+col+` IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(batch)), ",")+`)`, batch...)
		if err != nil {
			return fmt.Errorf("query resources: %w", err)
		}
		for rows.Next() {
			var key any
			var attrs string
			if err := rows.Scan(&key, &attrs); err != nil {
				rows.Close()
				return fmt.Errorf("scan resource: %w", err)
			}
			if len(attrs) <= 2 {
				attrs = ""
			}
			fn(key, attrs)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("query resources: %w", err)
		}
	}
	return nil
}

// withResources fills each log's Resource from the resources table.
func (r *Reader) withResources(ctx context.Context, logs []Log) error {
	ids := make([]any, 0, len(logs))
	seen := map[int64]bool{}
	for i := range logs {
		if id := logs[i].resourceID; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	attrs := make(map[int64][]byte, len(ids))
	err := r.resourceAttrs(ctx, "main", "id", ids, func(key any, a string) {
		if id, ok := key.(int64); ok && a != "" {
			attrs[id] = []byte(a)
		}
	})
	if err != nil {
		return fmt.Errorf("log resources: %w", err)
	}
	for i := range logs {
		logs[i].Resource = attrs[logs[i].resourceID] // shared between logs of one resource
	}
	return nil
}

// chunkResources resolves the resources of the spans b decoded from
// trace_chunks, one query for the trace: each chunk names its resources by
// hash in a table of its own, which the spans' Text.Resource indexes. It
// rewrites those indexes into the returned list, which holds each distinct
// resource's attributes once; a 161,000-span trace names a few dozen.
func (r *Reader) chunkResources(ctx context.Context, b *traceBufs) ([]RawJSON, error) {
	schema, err := r.traceSchema(ctx)
	if err != nil {
		return nil, fmt.Errorf("span resources: %w", err)
	}
	index := map[[16]byte]uint32{}
	var keys []any
	var local []uint32
	for i := range b.chunks {
		c := &b.chunks[i]
		table := b.arena[c.res.Off : c.res.Off+c.res.N]
		local = local[:0]
		for k := 0; k+16 <= len(table); k += 16 {
			h := [16]byte(table[k : k+16])
			x, ok := index[h]
			if !ok {
				x = uint32(len(keys))
				index[h] = x
				keys = append(keys, h[:])
			}
			local = append(local, x)
		}
		text := b.text[c.span : c.span+c.spans]
		for j := range text {
			text[j].Resource = local[text[j].Resource] // Decode checked the index
		}
	}
	out := make([]RawJSON, len(keys))
	err = r.resourceAttrs(ctx, schema, "hash", keys, func(key any, a string) {
		if h, ok := key.([]byte); ok && len(h) == 16 {
			if x, ok := index[[16]byte(h)]; ok {
				out[x] = RawJSON(a)
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("span resources: %w", err)
	}
	return out, nil
}

// streamResources reads the attributes of the resources of the metric
// streams in groups, one query for all, by resource id ("" for none).
func (r *Reader) streamResources(ctx context.Context, groups map[[2]string][]metricStream) (map[int64]RawJSON, error) {
	var ids []any
	seen := map[int64]bool{}
	for _, ms := range groups {
		for _, m := range ms {
			if !seen[m.resource] {
				seen[m.resource] = true
				ids = append(ids, m.resource)
			}
		}
	}
	attrs := make(map[int64]RawJSON, len(ids))
	err := r.resourceAttrs(ctx, "main", "id", ids, func(key any, a string) {
		if id, ok := key.(int64); ok {
			attrs[id] = RawJSON(a)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("metric stream resources: %w", err)
	}
	return attrs, nil
}

// seriesResources lists the distinct non-empty resources of streams ms in
// resource id order.
func seriesResources(ms []metricStream, attrs map[int64]RawJSON) []RawJSON {
	ids := make([]int64, 0, len(ms))
	for _, m := range ms {
		ids = append(ids, m.resource)
	}
	slices.Sort(ids)
	var out []RawJSON
	for _, id := range slices.Compact(ids) {
		if a := attrs[id]; a != "" {
			out = append(out, a)
		}
	}
	return out
}
