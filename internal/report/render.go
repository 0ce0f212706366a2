package report

import (
	"fmt"
	"io"
	"time"

	"github.com/otelbench/otelbench/internal/loadgen"
)

// WriteText writes r as `otelbench load` prints it, then, for a shard or a
// merged report, where its parts started: the spread of their first sends
// and the clock offsets they estimated. bound is the spread to warn past (0:
// DefaultSpreadBound).
func WriteText(w io.Writer, r *loadgen.Report, bound time.Duration) error {
	if err := r.WriteText(w); err != nil {
		return err
	}
	if len(r.Shards) == 0 && r.Shard == nil {
		return nil
	}
	fmt.Fprintln(w)
	parts := shardsOf(r)
	if len(r.Shards) > 0 {
		fmt.Fprintf(w, "merged %d reports over the common window %s + %.3fs\n", len(parts), r.Started.UTC().Format(time.RFC3339Nano), r.DurationSeconds)
	}
	sp := StartSpread(r, bound)
	for _, s := range parts {
		fmt.Fprintf(w, "  %s first send %s (%+.3fs)", shardName(s), s.FirstSend.UTC().Format(time.RFC3339Nano), s.FirstSend.Sub(sp.First).Seconds())
		if s.StartAt != nil {
			fmt.Fprintf(w, ", %.3fs after --start-at", s.FirstSend.Sub(*s.StartAt).Seconds())
		}
		if o := s.ClockOffset; o != nil {
			fmt.Fprintf(w, ", target clock %+.3fs ±%.3fs (%s, %d samples)", o.Seconds, o.UncertaintySeconds, o.Source, o.Samples)
		} else {
			fmt.Fprint(w, ", clock offset unknown")
		}
		if s.Host != "" {
			fmt.Fprintf(w, ", %s", s.Host)
		}
		fmt.Fprintln(w)
	}
	if len(parts) > 1 {
		fmt.Fprintf(w, "start spread %v on the hosts' clocks", sp.Spread.Round(time.Microsecond))
		if sp.Corrected != nil {
			fmt.Fprintf(w, ", %v ±%v on the target's", sp.Corrected.Round(time.Microsecond), sp.Uncertainty.Round(time.Millisecond))
		}
		fmt.Fprintf(w, " (bound %v)\n", sp.Bound)
	}
	for _, warn := range sp.Warnings() {
		if _, err := fmt.Fprintf(w, "warning: %s\n", warn); err != nil {
			return err
		}
	}
	return nil
}

func shardName(s loadgen.Shard) string {
	if s.Count == 0 {
		return "run"
	}
	return fmt.Sprintf("shard %d/%d", s.Index, s.Count)
}
