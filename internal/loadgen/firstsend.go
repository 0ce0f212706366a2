package loadgen

import (
	"sync/atomic"
	"time"
)

// firstSend records the time of a run's first send, from whichever worker
// or event loop sends first. After the first, a mark costs one atomic load;
// on a nil *firstSend (a run that does not ask) it costs a nil check.
type firstSend struct{ unixNano atomic.Int64 }

func (f *firstSend) mark(t time.Time) {
	if f != nil && f.unixNano.Load() == 0 {
		f.unixNano.CompareAndSwap(0, t.UnixNano())
	}
}

// time returns the first send's time, or the zero time if nothing was sent.
func (f *firstSend) time() time.Time {
	ns := f.unixNano.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
