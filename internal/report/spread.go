package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/otelbench/otelbench/internal/loadgen"
)

// DefaultSpreadBound is the start-time spread past which a merged report is
// flagged: beyond it the common window holds stretches in which only some
// shards were sending, and the merged rate understates the peak.
const DefaultSpreadBound = time.Second

// Spread describes when the shards of a merged report really started.
type Spread struct {
	Shards   int
	First    time.Time     // earliest first send, host clocks
	Spread   time.Duration // latest minus earliest first send, host clocks
	Bound    time.Duration
	Exceeded bool
	// Corrected is the spread on the target's clock, when every shard
	// estimated its clock offset, ± Uncertainty (the sum of the two
	// largest offset uncertainties). It decides Exceeded when Uncertainty is
	// under half the bound.
	Corrected   *time.Duration
	Uncertainty time.Duration
	// Missing lists the shard indexes of 0..Count-1 that no report holds.
	Missing []int
}

// StartSpread measures the spread of the first sends of r's shards; bound
// 0 means DefaultSpreadBound. A single run has one shard and no spread.
func StartSpread(r *loadgen.Report, bound time.Duration) Spread {
	if bound == 0 {
		bound = DefaultSpreadBound
	}
	parts := shardsOf(r)
	sp := Spread{Shards: len(parts), Bound: bound}
	var last, cFirst, cLast time.Time
	corrected := true
	var unc []float64
	held := map[int]bool{}
	count := 0
	for i, s := range parts {
		if i == 0 || s.FirstSend.Before(sp.First) {
			sp.First = s.FirstSend
		}
		if i == 0 || s.FirstSend.After(last) {
			last = s.FirstSend
		}
		if s.ClockOffset == nil {
			corrected = false
		} else {
			t := s.FirstSend.Add(seconds(s.ClockOffset.Seconds))
			if i == 0 || t.Before(cFirst) {
				cFirst = t
			}
			if i == 0 || t.After(cLast) {
				cLast = t
			}
			unc = append(unc, s.ClockOffset.UncertaintySeconds)
		}
		if s.Count > 0 {
			held[s.Index], count = true, s.Count
		}
	}
	sp.Spread = last.Sub(sp.First)
	sp.Exceeded = sp.Spread > bound
	if corrected && len(parts) > 1 {
		d := cLast.Sub(cFirst)
		sp.Corrected = &d
		slices.Sort(unc)
		sp.Uncertainty = seconds(unc[len(unc)-1] + unc[len(unc)-2])
		if sp.Uncertainty < bound/2 { // else the hosts' clocks say more
			sp.Exceeded = d > bound
		}
	}
	for i := range count {
		if !held[i] {
			sp.Missing = append(sp.Missing, i)
		}
	}
	return sp
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Warnings returns what a reader of the merged figures must know.
func (s Spread) Warnings() []string {
	var w []string
	if s.Exceeded {
		w = append(w, fmt.Sprintf("shards started %v apart, more than %v: for that long not every shard was sending, so the merged rate understates the peak (synchronise with --start-at)",
			s.effective().Round(time.Millisecond), s.Bound))
	}
	if len(s.Missing) > 0 {
		w = append(w, fmt.Sprintf("shards %v have no report: the merged figures cover only part of the load", s.Missing))
	}
	return w
}

func (s Spread) effective() time.Duration {
	if s.Corrected != nil {
		return *s.Corrected
	}
	return s.Spread
}

// shardsOf returns the shards r covers: a merged report's list, a shard's
// own, or for an unsharded run one that started with it.
func shardsOf(r *loadgen.Report) []loadgen.Shard {
	switch {
	case len(r.Shards) > 0:
		return r.Shards
	case r.Shard != nil:
		return []loadgen.Shard{*r.Shard}
	}
	return []loadgen.Shard{{FirstSend: r.Started}}
}
