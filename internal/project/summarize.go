package project

import (
	"fmt"

	"github.com/otelbench/otelbench/internal/schema"
)

// logBlock and serviceCount are a slice's additions to a log_blocks and a service_counts row.
type logBlock struct {
	block, minTime, maxTime, logs int64
}

type serviceCount struct {
	service  string
	records  int64
	lastSeen int64
}

// summarize adds the slice's logs to log_blocks (oldest and newest time per block of
// 1<<schema.LogBlockShift ids), its points to point_blocks (the same per block of each points table,
// gathered by writePoints) and its logs, spans and new metrics to service_counts, and moves
// summary_state past them, in the slice's transaction: the summaries the query side reads
// instead of scanning the tables. Triggers on projection_state once did this in SQL, reading the
// slice's rows back and sorting them by service: ~11% of the committing thread in a mixed
// catch-up, where the projector has the rows at hand. New metrics rows stay counted in SQL
// (countMetrics, with the range read from summary_state): a slice adds a handful at most.
func (p *projector) summarize() error {
	st, ins := &p.stage, p.ins
	if ins.upsertLogBlock != nil && (len(st.Logs) > 0 || len(st.Metrics) > 0) {
		blocks := ins.blocks[:0]
		services := ins.services[:0]
		var lastLog int64
		for i := range st.Logs {
			l := &st.Logs[i]
			b := l.ID >> schema.LogBlockShift
			if n := len(blocks); n == 0 || blocks[n-1].block != b {
				blocks = append(blocks, logBlock{block: b, minTime: l.Time, maxTime: l.Time})
			}
			lb := &blocks[len(blocks)-1]
			lb.minTime, lb.maxTime, lb.logs = min(lb.minTime, l.Time), max(lb.maxTime, l.Time), lb.logs+1
			services = countService(services, st.Resources[l.Res].Service, l.Time)
			lastLog = l.ID
		}
		ins.blocks, ins.services = blocks, services
		for _, b := range blocks {
			if _, err := ins.upsertLogBlock.Exec(b.block, b.minTime, b.maxTime, b.logs); err != nil {
				return fmt.Errorf("log blocks: %w", err)
			}
		}
		if err := ins.addServiceCounts("logs", services); err != nil {
			return err
		}
		if _, err := ins.countMetrics.Exec(); err != nil {
			return fmt.Errorf("service counts of metrics: %w", err)
		}
		if _, err := ins.logsState.Exec(lastLog); err != nil {
			return fmt.Errorf("summary state: %w", err)
		}
	}
	for _, b := range ins.pointBlocks {
		if _, err := ins.upsertPointBlock.Exec(schema.PointTables[b.table], b.block, b.minTime, b.maxTime, b.count); err != nil {
			return fmt.Errorf("point blocks: %w", err)
		}
	}
	if ins.spansState != nil && len(st.Spans) > 0 {
		services := ins.services[:0]
		for i := range st.Spans {
			s := &st.Spans[i]
			services = countService(services, st.Resources[s.Res].Service, s.Start)
		}
		ins.services = services
		if err := ins.addServiceCounts("spans", services); err != nil {
			return err
		}
		if _, err := ins.spansState.Exec(st.Spans[len(st.Spans)-1].ID); err != nil {
			return fmt.Errorf("summary state: %w", err)
		}
	}
	return nil
}

// countService counts one record of service (a resource's service: a string, or nil for
// none, counted as "") at time t. A slice has a few services: a linear search beats a map.
func countService(counts []serviceCount, service any, t int64) []serviceCount {
	name, _ := service.(string)
	for i := range counts {
		if c := &counts[i]; c.service == name {
			c.records++
			c.lastSeen = max(c.lastSeen, t)
			return counts
		}
	}
	return append(counts, serviceCount{service: name, records: 1, lastSeen: t})
}

// addServiceCounts adds counts to service_counts' rows of signal.
func (ins *inserts) addServiceCounts(signal string, counts []serviceCount) error {
	for _, c := range counts {
		if _, err := ins.upsertServiceCount.Exec(c.service, signal, c.records, c.lastSeen); err != nil {
			return fmt.Errorf("service counts of %s: %w", signal, err)
		}
	}
	return nil
}

// pointBlock is a slice's addition to a point_blocks row: table is an index into schema.PointTables.
type pointBlock struct {
	table                          int
	block, minTime, maxTime, count int64
}

// addPointBlock counts the point of schema.PointTables[table] with rowid id and time t into the slice's
// point blocks and returns its block.
func (ins *inserts) addPointBlock(table int, id, t int64) int64 {
	b := id >> schema.PointBlockShift
	if n := len(ins.pointBlocks); n == 0 || ins.pointBlocks[n-1].table != table || ins.pointBlocks[n-1].block != b {
		ins.pointBlocks = append(ins.pointBlocks, pointBlock{table: table, block: b, minTime: t, maxTime: t})
	}
	pb := &ins.pointBlocks[len(ins.pointBlocks)-1]
	pb.minTime, pb.maxTime, pb.count = min(pb.minTime, t), max(pb.maxTime, t), pb.count+1
	return b
}
