package procfd

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"
)

// writer renders snapshots as a table or JSON.
type writer struct {
	cfg            *Config
	stdout, stderr io.Writer
}

func newWriter(cfg Config) *writer {
	w := &writer{cfg: &cfg, stdout: cfg.Stdout, stderr: cfg.Stderr}
	if w.stdout == nil {
		w.stdout = io.Discard
	}
	if w.stderr == nil {
		w.stderr = io.Discard
	}
	return w
}

func (w *writer) write(snap *Snapshot, round int) error {
	for _, e := range snap.Errors {
		fmt.Fprintf(w.stderr, "fdcount: pid %d: %s\n", e.PID, e.Error)
	}
	if w.cfg.JSON {
		enc := json.NewEncoder(w.stdout)
		if w.cfg.Watch == 0 {
			enc.SetIndent("", "  ")
		}
		return enc.Encode(snap)
	}
	if w.cfg.Watch > 0 {
		if round > 1 {
			fmt.Fprintln(w.stdout)
		}
		fmt.Fprintf(w.stdout, "# %s round %d\n", snap.Time.Format(time.RFC3339Nano), round)
	}
	return w.table(snap)
}

func (w *writer) table(snap *Snapshot) error {
	tw := tabwriter.NewWriter(w.stdout, 0, 8, 2, ' ', 0)
	if !w.cfg.Threads {
		fmt.Fprintln(tw, "PID\tCOMM\tFDS\tMETHOD")
		for _, p := range snap.Processes {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", p.PID, escapeComm(p.Comm), p.FDs, p.Method)
		}
		return tw.Flush()
	}
	fmt.Fprintln(tw, "PID\tTID\tCOMM\tFDS\tMETHOD\tTHREADS")
	for _, p := range snap.Processes {
		if len(p.Tables) == 0 {
			fmt.Fprintf(tw, "%d\t-\t%s\t%d\t%s\t-\n", p.PID, escapeComm(p.Comm), p.FDs, p.Method)
			continue
		}
		for i, t := range p.Tables {
			tid, comm := strconv.Itoa(p.PID), p.Comm
			if i > 0 {
				tid, comm = strconv.Itoa(t.TIDs[0]), t.Comm
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%d\n", p.PID, tid, escapeComm(comm), t.FDs, t.Method, len(t.TIDs))
		}
	}
	return tw.Flush()
}

// escapeComm makes a process or thread name safe for the table. Any process
// can set its own name (prctl(PR_SET_NAME), /proc/self/comm) to control bytes:
// a raw ESC or newline would let it repaint the terminal or print fake rows,
// and a tab would shift the columns. A name of printable characters is shown
// as is; any other is shown Go-quoted without the quotes (\x1b, \n, \t, \\),
// so the escaped form never collides with a printable name.
func escapeComm(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return r == '\\' || !unicode.IsPrint(r) }) < 0 {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}
