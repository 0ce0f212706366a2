//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// shipper batches lines into OTLP logs requests and posts them.
type shipper struct {
	c       config
	client  *http.Client
	pending plog.Logs
	recs    plog.LogRecordSlice
	last    time.Time
	sum     summary
}

func newShipper(c config) *shipper {
	s := &shipper{c: c, client: &http.Client{Timeout: 10 * time.Second}, last: time.Now()}
	s.reset()
	return s
}

func (s *shipper) reset() {
	s.pending = plog.NewLogs()
	rl := s.pending.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "tailer")
	s.recs = rl.ScopeLogs().AppendEmpty().LogRecords()
}

// add takes the nth line of a file, applying the defects.
func (s *shipper) add(line []byte, n int64) {
	s.sum.Read++
	if s.c.dropEvery > 0 && n%int64(s.c.dropEvery) == 0 {
		s.sum.Dropped++
		return
	}
	copies := 1
	if s.c.dupEvery > 0 && n%int64(s.c.dupEvery) == 0 {
		copies = 2
		s.sum.Duplicated++
	}
	if s.c.endpoint == "" {
		s.sum.Shipped += int64(copies)
		return
	}
	now := time.Now()
	for range copies {
		r := s.recs.AppendEmpty()
		r.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
		r.Body().SetStr(string(line))
	}
	if s.recs.Len() >= s.c.batch {
		s.ship()
	}
}

// tick ships what is pending when the flush period passed.
func (s *shipper) tick() {
	if time.Since(s.last) >= s.c.flush {
		s.ship()
	}
}

// ship posts the pending records, retrying a failed post a few times.
func (s *shipper) ship() {
	s.last = time.Now()
	n := s.recs.Len()
	if n == 0 || s.c.endpoint == "" {
		return
	}
	body, err := plogotlp.NewExportRequestFromLogs(s.pending).MarshalProto()
	s.reset()
	if err == nil {
		for attempt := range 5 {
			if err = s.post(body); err == nil {
				break
			}
			time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
		}
	}
	if err != nil {
		s.sum.Failed += int64(n)
		return
	}
	s.sum.Shipped += int64(n)
}

func (s *shipper) post(body []byte) error {
	resp, err := s.client.Post(s.c.endpoint+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("export: status %d", resp.StatusCode)
	}
	return nil
}
