package ingestsrv

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// bodyRateGrace is how long a body may take before MinBodyRate applies:
// it covers the first round trips of a client on a slow link, and a
// small body always arrives within it.
const bodyRateGrace = 5 * time.Second

// errSlowBody means the body arrived more slowly than Config.MinBodyRate
// (HTTP 408, connection closed).
var errSlowBody = errors.New("request body arrived too slowly")

// rateReader reads a request body under a minimum average rate: the
// connection's read deadline follows the moment the body would fall below
// the rate, start + bodyRateGrace + (got+1)/rate (within a second after
// it), never past start + readTimeout. The budget is charged as bytes arrive
// (otlpcodec.ReadBody), so a slow client holds little memory; this frees
// its connection too: twelve clients each trickling one byte every 0.5 s
// of a declared 4 MiB otherwise held their connections for the whole 60 s
// read timeout.
//
// rateReaders are pooled (Server.rates), like body buffers: at tens of
// thousands of requests a second each allocation is GC work.
type rateReader struct {
	w     http.ResponseWriter
	body  io.Reader
	rate  int64
	start time.Time
	got   int64
	set   time.Duration // the read deadline set, after start (0: none yet)
}

// getRateReader returns a pooled rateReader for body; give it back with
// putRateReader once the body is read.
func (s *Server) getRateReader(w http.ResponseWriter, body io.Reader, start time.Time) *rateReader {
	r, _ := s.rates.Get().(*rateReader)
	if r == nil {
		r = new(rateReader)
	}
	*r = rateReader{w: w, body: body, rate: s.cfg.MinBodyRate, start: start}
	return r
}

func (s *Server) putRateReader(r *rateReader) {
	*r = rateReader{}
	s.rates.Put(r)
}

// setDeadline sets the connection's read deadline; an unsupported
// connection keeps the server's ReadTimeout.
func (r *rateReader) setDeadline(t time.Time) {
	_ = http.NewResponseController(r.w).SetReadDeadline(t)
}

// finish puts the read deadline back where the server's ReadTimeout had it,
// once the body is read: net/http's background read (which watches for the
// client going away) must not time out while the request waits for its
// group commit, or the request's context is cancelled and a stored
// request is answered 503.
func (r *rateReader) finish() {
	r.setDeadline(r.start.Add(readTimeout))
}

func (r *rateReader) Read(p []byte) (int, error) {
	// The deadline moves only once the rule's due time passes the one set,
	// and then a second past it: a small body read in a few calls sets it
	// once, not once a call.
	due := bodyRateGrace + time.Duration(float64(r.got+1)/float64(r.rate)*float64(time.Second))
	if due > r.set {
		r.set = min(due+time.Second, readTimeout)
		r.setDeadline(r.start.Add(r.set))
	}
	n, err := r.body.Read(p)
	r.got += int64(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, errSlowBody
	}
	return n, err
}
