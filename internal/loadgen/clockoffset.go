package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Clock offset probes. An HTTP Date header gives the server's time to the
// second (RFC 9110 §6.6.1), so one answer bounds the offset to a window a
// second wide; probes timed so that the server's second boundary falls in
// the middle of the current window halve it each time (htpdate's method),
// down to about the round-trip time.
const (
	// DefaultClockProbes is the most probes while waiting for a start time:
	// ten halvings take a one-second window to about a millisecond.
	DefaultClockProbes = 10
	clockProbeTimeout  = 2 * time.Second
	// ClockOffsetSource names the method in reports.
	ClockOffsetSource = "http-date"
)

// ErrNoDate is returned when the target's answers carry no usable Date.
var ErrNoDate = errors.New("no Date header in the target's answers")

// EstimateClockOffset probes url (a GET; any status will do) up to probes
// times, and no later than deadline (zero: no bound), and returns the
// target's clock minus this host's, read from the Date header of the
// answers. It sleeps between probes on clock.
func EstimateClockOffset(ctx context.Context, client *http.Client, url string, clock Clock, probes int, deadline time.Time) (*ClockOffset, error) {
	lo, hi := -1e18, 1e18 // offset bounds, seconds
	n := 0
	var rtt time.Duration // the longest round trip seen
	for n < probes {
		if n > 0 {
			// Send when host time + the window's middle is a whole second of
			// the server's: its Date then tells on which side the offset lies.
			mid := (lo + hi) / 2
			now := clock.Now()
			server := float64(now.UnixNano())/1e9 + mid
			wait := time.Duration((1 - (server - float64(int64(server)))) * float64(time.Second))
			if !deadline.IsZero() && now.Add(wait+2*rtt+50*time.Millisecond).After(deadline) {
				break
			}
			if err := clock.Sleep(ctx, wait); err != nil {
				return nil, err
			}
		}
		sent := clock.Now()
		date, err := probeDate(ctx, client, url)
		got := clock.Now()
		if err != nil {
			return nil, err
		}
		rtt = max(rtt, got.Sub(sent))
		n++
		d := float64(date.Unix())
		lo = max(lo, d-float64(got.UnixNano())/1e9)
		hi = min(hi, d+1-float64(sent.UnixNano())/1e9)
		if lo > hi {
			return nil, fmt.Errorf("clock offset: the target's Date headers contradict each other (its clock stepped?)")
		}
	}
	if n == 0 {
		return nil, ErrNoDate
	}
	return &ClockOffset{Seconds: (lo + hi) / 2, UncertaintySeconds: (hi - lo) / 2, Source: ClockOffsetSource, Samples: n}, nil
}

// probeDate sends one GET to url and returns the answer's Date.
func probeDate(ctx context.Context, client *http.Client, url string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, clockProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("clock probe: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return time.Time{}, fmt.Errorf("clock probe: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	d, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return time.Time{}, ErrNoDate
	}
	return d, nil
}
