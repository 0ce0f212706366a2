package loadgen

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"

	"github.com/otelbench/otelbench/internal/otlpgrpc"
)

// signalAcc accumulates the accounting of one signal. Workers of all
// signals record concurrently; one mutex per signal keeps it exact, and the
// live counters feed the progress display without taking the lock.
type signalAcc struct {
	mu    sync.Mutex
	stats SignalStats
	h     *hdrhistogram.Histogram // corrected (from intended send) latency
	hu    *hdrhistogram.Histogram // uncorrected (from actual send); open model only

	liveRequests atomic.Int64
	liveErrors   atomic.Int64
}

func newSignalAcc(open bool) *signalAcc {
	a := &signalAcc{h: newHistogram()}
	if open {
		a.hu = newHistogram()
	}
	return a
}

// attempt is the outcome of one HTTP attempt.
type attempt struct {
	status      int   // HTTP status; 0 when there was no response
	transport   bool  // the attempt failed without an HTTP response
	canceled    bool  // aborted by context cancellation
	records     int64 // records in the request body
	rejected    int64 // partial_success rejections (200 only)
	badResponse bool  // a 200 body that did not decode
	bytes       int64
	final       bool // the request's last attempt: its outcome is the request's
	grpcCode    int  // gRPC code + 1; 0 over HTTP
}

func (a *signalAcc) recordAttempt(at attempt, retry bool) {
	a.liveRequests.Add(1)
	failed := !at.canceled && (at.transport || at.status < 200 || at.status >= 300)
	if failed {
		a.liveErrors.Add(1)
	}
	a.mu.Lock()
	s := &a.stats
	s.Requests++
	s.RecordsSent += at.records
	s.BytesSent += at.bytes
	if retry {
		s.Retries++
	}
	if at.final && !at.canceled {
		if !at.transport && at.status >= 200 && at.status < 300 {
			s.Succeeded++
		} else {
			s.Failed++
		}
	}
	switch {
	case at.canceled:
		s.Canceled++
	case at.transport:
		s.TransportErrors++
	default:
		s.Status.add(at.status)
		if at.grpcCode > 0 {
			if s.GRPCStatus == nil {
				s.GRPCStatus = map[string]int64{}
			}
			s.GRPCStatus[otlpgrpc.CodeName(codes.Code(at.grpcCode-1))]++
		}
		if at.status == 200 {
			rej := min(max(at.rejected, 0), at.records)
			s.RecordsAcked += at.records - rej
			s.RecordsRejected += rej
		}
		if at.badResponse {
			s.ResponseDecodeErrors++
		}
	}
	a.mu.Unlock()
}

// recordLatency records one request that got a response: corrected is
// measured from the intended send time, uncorrected from the actual send.
func (a *signalAcc) recordLatency(corrected, uncorrected time.Duration, late bool) {
	a.mu.Lock()
	recordLatency(a.h, corrected)
	if a.hu != nil {
		recordLatency(a.hu, uncorrected)
	}
	if late {
		a.stats.LateSends++
	}
	a.mu.Unlock()
}

// recordLate counts a late send that got no response.
func (a *signalAcc) recordLate() {
	a.mu.Lock()
	a.stats.LateSends++
	a.mu.Unlock()
}
