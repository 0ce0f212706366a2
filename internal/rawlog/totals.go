package rawlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// Durable totals. Stats.Stored starts at zero with the process; Stats.Total, since the
// directory was created, survives restarts and crashes exactly as the records do. The segments
// count what they hold, by signal (seglog.SegmentInfo.Counts, rebuilt by recovery from the
// record headers); what pruning deleted is counted in a small state file, pruned.json in the
// log's directory, written atomically (a temporary file, fsynced, renamed over, the directory
// fsynced) before the segments it adds are removed, with Through, the last id it covers: a
// crash between the two leaves segments that the file already counts, which Open deletes
// without counting them again. Open reads them into the counters' base; Stats.Total adds the
// process's counters to it. The write path pays nothing for them.

// prunedTotals are what the deleted segments held: every record with id <= Through.
type prunedTotals struct {
	Through int64
	Signals [signal.Traces + 1]seglog.Count // by signal value
}

// prunedTotalsFile is the state file in the raw log's directory.
const prunedTotalsFile = "pruned.json"

// add counts a segment's records.
func (t *prunedTotals) add(c seglog.Counts) {
	for i := range c {
		t.Signals[i].Requests += c[i].Requests
		t.Signals[i].Records += c[i].Records
		t.Signals[i].Bytes += c[i].Bytes
	}
}

// readPrunedTotals reads dir's pruned totals (zero when none was written).
func readPrunedTotals(dir string) (prunedTotals, error) {
	var t prunedTotals
	b, err := os.ReadFile(filepath.Join(dir, prunedTotalsFile))
	if errors.Is(err, os.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return t, fmt.Errorf("store: read pruned raw totals: %w", err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("store: read pruned raw totals %s: %w", filepath.Join(dir, prunedTotalsFile), err)
	}
	return t, nil
}

// writePrunedTotals replaces dir's pruned totals with t atomically and durably.
func writePrunedTotals(dir string, t prunedTotals) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("store: encode pruned raw totals: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, prunedTotalsFile), b); err != nil {
		return diskfull.Classify("write pruned raw totals", err)
	}
	return nil
}

// writeFileAtomic writes b to path through a temporary file that is fsynced and renamed over
// path, then fsyncs the directory: after a crash path holds the old bytes or the new, whole.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// loadTotals reads into the counters' base the pruned totals and what the segments hold.
func (l *Log) loadTotals() {
	t := l.prune.totals
	for _, sg := range l.seg.Segments() {
		if sg.Last > t.Through {
			t.add(sg.Counts)
		}
	}
	for sig, n := range t.Signals {
		l.stats.base[sig] = Count{Requests: uint64(n.Requests), Records: uint64(n.Records), Bytes: uint64(n.Bytes)}
	}
}
