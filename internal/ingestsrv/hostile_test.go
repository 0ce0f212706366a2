package ingestsrv

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/otlpwire"
	"github.com/otelbench/otelbench/internal/polltest"
)

// TestNestingLimitBothEncodings: a body nested as deep as the projector
// can read is stored and projected in both encodings; one level deeper is
// 400 in both, with a message naming the limit, and nothing is stored. A
// JSON body used to be answered 200 and then never projected.
func TestNestingLimitBothEncodings(t *testing.T) {
	ts := startServer(t, Config{})
	tests := []struct {
		name   string
		levels int // deepest accepted: the leaf AnyValue is at depth levels*(2 or 3), below the limit
		kvlist bool
	}{
		{"arrayValue", (otlpwire.RecursionLimit - 1) / 2, false},
		{"kvlistValue", (otlpwire.RecursionLimit - 1) / 3, true},
	}
	var stored, refused int
	for _, tt := range tests {
		for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
			t.Run(fmt.Sprintf("%s/%v", tt.name, enc), func(t *testing.T) {
				ok := post(t, nil, ts.url+"/v1/logs", enc.ContentType(), "", encode(t, otlptest.NestedLogs(tt.levels, tt.kvlist), enc))
				wantStatus(t, ok, http.StatusOK)
				stored++
				resp := post(t, nil, ts.url+"/v1/logs", enc.ContentType(), "", encode(t, otlptest.NestedLogs(tt.levels+1, tt.kvlist), enc))
				wantStatus(t, resp, http.StatusBadRequest)
				refused++
				_, msg, err := otlpcodec.ParseStatus(enc, resp.body)
				if err != nil || !strings.Contains(msg, strconv.Itoa(otlpwire.RecursionLimit)) {
					t.Errorf("400 message %q (%v), want it to name the limit %d", msg, err, otlpwire.RecursionLimit)
				}
			})
		}
	}
	waitProjected(t, ts.Store())
	st := getStats(t, ts.url)
	if got := st.Signals["logs"]; got.Records != uint64(stored) || got.RecordsProjected != uint64(stored) {
		t.Errorf("logs stored %d, projected %d; want %d and %d", got.Records, got.RecordsProjected, stored, stored)
	}
	if got := st.Rejections["too_deep"]; got != uint64(refused) {
		t.Errorf("too_deep rejections %d, want %d", got, refused)
	}
}

// TestTrickleDoesNotLockOut: twelve connections declare bodies that
// together claim the whole in-flight budget and trickle one byte every
// half second. Legitimate clients keep getting 200 meanwhile (the budget
// is charged as bytes arrive), and the tricklers are cut off with 408 once
// they fall below the minimum body rate.
func TestTrickleDoesNotLockOut(t *testing.T) {
	ts := startServer(t, Config{})
	const tricklers = 12
	length := DefaultInflightBytes/tricklers - 100 // within MaxBody; together all but ~1 KB of the budget
	addr := strings.TrimPrefix(ts.url, "http://")
	answers := make(chan string, tricklers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	for range tricklers {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ctProto, length)
		wg.Go(func() { // one byte every 0.5 s until answered, stopped, or 30 s
			defer c.Close()
			for i := 0; i < 60; i++ {
				if _, err := c.Write([]byte{0x0a}); err != nil {
					break
				}
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Millisecond):
				}
			}
		})
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			answers <- strings.TrimSpace(line)
		})
	}
	// Every trickler's head and first byte are in: the body reader charges a first buffer of
	// 32 KiB (otlpcodec's initialGuess) on its first byte, and a second only after 32 KiB have
	// arrived, which a trickle of a byte every half second does not reach.
	const firstCharge = 32 << 10
	polltest.Until(t, "every trickler's first byte read", func() bool { return ts.budget.used.Load() >= tricklers*firstCharge })
	statuses := map[int]int{}
	for i := range 20 { // paced across 2 s of the trickle, not a synchronisation
		resp := post(t, nil, ts.url+"/v1/logs", ctProto, "", encode(t, otlptest.Logs(uint64(i), 10), otlpcodec.EncodingProto))
		statuses[resp.status]++
		time.Sleep(100 * time.Millisecond)
	}
	if statuses[http.StatusOK] != 20 {
		t.Errorf("legitimate requests during the trickle: %v, want 20 answered 200", statuses)
	}
	for range tricklers {
		if got := <-answers; !strings.HasPrefix(got, "HTTP/1.1 408") {
			t.Errorf("trickler answered %q, want 408", got)
		}
	}
	if got := ts.Stats().Rejections["slow_body"]; got != tricklers {
		t.Errorf("slow_body rejections %d, want %d", got, tricklers)
	}
}

// TestConnCapPerSource: one source address holding more connections than
// MaxConns does not lock out another: it is held to its own cap, the
// excess is answered 503 and counted as conn_source_limit, and a client
// from another address gets 200.
func TestConnCapPerSource(t *testing.T) {
	ts := startServer(t, Config{})
	addr := strings.TrimPrefix(ts.url, "http://")
	hog := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range DefaultMaxConns + 16 { // connect and send nothing, like a slow client
		c, err := hog.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("after %d connections: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	polltest.Until(t, "the hog's connections admitted or rejected", func() bool {
		return len(ts.admit.Load().slots) >= DefaultMaxConnsPerSource
	})
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)},
	}).DialContext}}
	defer other.CloseIdleConnections()
	for i := range 5 {
		resp := post(t, other, ts.url+"/v1/logs", ctProto, "", encode(t, otlptest.Logs(uint64(i), 1), otlpcodec.EncodingProto))
		wantStatus(t, resp, http.StatusOK)
	}
	if got := len(ts.admit.Load().slots); got > DefaultMaxConnsPerSource+1 {
		t.Errorf("%d connections admitted, want at most %d from the hog and 1 from the other client", got, DefaultMaxConnsPerSource)
	}
	for _, c := range conns { // the rejected ones count when their rejecter is done
		c.Close()
	}
	conns = nil
	want := uint64(DefaultMaxConns + 16 - DefaultMaxConnsPerSource)
	polltest.Until(t, "conn_source_limit counted", func() bool { return ts.Stats().Rejections["conn_source_limit"] >= want })
	if got := ts.Stats().Rejections["conn_source_limit"]; got != want {
		t.Errorf("conn_source_limit rejections %d, want %d", got, want)
	}
}

// TestMaxRecords: a request may hold MaxRecords records, rejected ones
// included; one more is 413 naming the limit, and nothing is stored.
func TestMaxRecords(t *testing.T) {
	const limit = 100
	ts := startServer(t, Config{MaxRecords: limit})
	tests := []struct {
		name string
		path string
		body []byte
		want int
	}{
		{"at the limit", "/v1/logs", encode(t, otlptest.Logs(0, limit), otlpcodec.EncodingProto), http.StatusOK},
		{"one over", "/v1/logs", encode(t, otlptest.Logs(0, limit+1), otlpcodec.EncodingProto), http.StatusRequestEntityTooLarge},
		{"one over, JSON", "/v1/logs", encode(t, otlptest.Logs(0, limit+1), otlpcodec.EncodingJSON), http.StatusRequestEntityTooLarge},
		{"over with rejected spans", "/v1/traces", encode(t, otlptest.Traces(0, limit-1, 2), otlpcodec.EncodingProto), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := ctProto
			if tt.name == "one over, JSON" {
				ct = ctJSON
			}
			resp := post(t, nil, ts.url+tt.path, ct, "", tt.body)
			wantStatus(t, resp, tt.want)
			if tt.want == http.StatusOK {
				return
			}
			enc, _ := otlpcodec.ParseContentType(ct)
			if _, msg, err := otlpcodec.ParseStatus(enc, resp.body); err != nil || !strings.Contains(msg, strconv.Itoa(limit)) {
				t.Errorf("413 message %q (%v), want it to name the limit %d", msg, err, limit)
			}
		})
	}
	st := getStats(t, ts.url)
	if st.Signals["logs"].Records != limit || st.Signals["traces"].Records != 0 || st.Rejections["too_many_records"] != 3 {
		t.Errorf("stored %d logs, %d spans, too_many_records %d; want %d, 0, 3",
			st.Signals["logs"].Records, st.Signals["traces"].Records, st.Rejections["too_many_records"], limit)
	}
}
