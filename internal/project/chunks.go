package project

import (
	"fmt"

	"github.com/otelbench/otelbench/internal/sqlitec"
)

// writeTraceChunks inserts the slice's packed chunks (packChunks), one trace_chunks row per
// trace, in the slice's transaction. The rows' blobs stay in the stage's buffer until the next
// slice is staged into it, after the bulk flushes that copy them.
func (p *projector) writeTraceChunks() error {
	st := &p.stage
	for _, c := range st.Chunks {
		if err := p.ins.chunks.add(sqlitec.Text(c.TraceID), sqlitec.Int(c.First), sqlitec.Int(c.Last), sqlitec.Int(c.Count),
			sqlitec.Int(c.Errors), sqlitec.Blob(st.ChunkBuf[c.Off:c.End:c.End])); err != nil {
			return fmt.Errorf("insert trace chunks: %w", err)
		}
	}
	return nil
}
