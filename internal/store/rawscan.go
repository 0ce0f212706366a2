package store

import (
	"sync"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/seglog"
)

// ScanRaw calls fn with each durable raw row still in the raw log, in id order, until fn returns
// an error, which ScanRaw returns. A row's payload is valid during the call only. It reads
// through a reader of its own, beside the writer and the projectors.
func (s *Store) ScanRaw(fn func(rawlog.Row) error) error {
	r := s.raw.NewReader()
	defer r.Close()
	var rows []seglog.Row
	for after := int64(0); ; {
		var err error
		rows, after, err = r.Read(after, seglog.Limits{Rows: 1024}, rows)
		if err != nil {
			return rawError("scan raw log", err)
		}
		if len(rows) == 0 {
			return nil
		}
		for _, sr := range rows {
			row := rawlog.Row{ID: sr.ID, Signal: sr.Signal, Records: int64(sr.Records), Received: sr.Received, Payload: sr.Payload}
			if err := fn(row); err != nil {
				return err
			}
		}
	}
}

// HoldWriter makes the writer wait, before its next group write, until release is called (once
// or more; the first call releases): tests fill the queue with it, or hold a group between the
// queue and the raw log.
func (s *Store) HoldWriter() (release func()) {
	ch := make(chan struct{})
	hook := func() { <-ch }
	s.beforeWrite.Store(&hook)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.beforeWrite.Store(nil)
			close(ch)
		})
	}
}

// RawSegments lists the raw log's segment files, oldest first (the last is the active one).
func (s *Store) RawSegments() []seglog.SegmentInfo { return s.raw.Segments() }
