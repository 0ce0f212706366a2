package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchunit"

	"github.com/otelbench/otelbench/internal/abstats"
)

// cells returns the formatted median of each side and the row's marker,
// scaled together the way benchstat scales a row.
func (res Result) cells() (base, head string) {
	m, _ := metricByKey(res.Metric)
	c := res.Comparison
	sc := benchunit.CommonScale([]float64{c.Base.Center, c.Head.Center}, m.Class())
	return sc.Format(c.Base.Center) + m.Suffix, sc.Format(c.Head.Center) + m.Suffix
}

func (res Result) marker() string {
	switch {
	case res.Regressed:
		return "worse"
	case res.Improved:
		return "better"
	}
	return ""
}

// formatChange formats a relative change as a signed percentage.
func formatChange(v float64) string { return formatRatio(v, "+∞", "%+.2f%%") }

// formatDetectable formats a detectable change: "±12.3%", "±∞" when no
// change can be seen, "?" when unknown.
func formatDetectable(v float64) string { return formatRatio(v, "±∞", "±%.1f%%") }

// formatRatio formats v as a percentage with format, inf for +Inf and "?" for NaN.
func formatRatio(v float64, inf, format string) string {
	switch {
	case math.IsInf(v, 1):
		return inf
	case math.IsNaN(v):
		return "?"
	}
	return fmt.Sprintf(format, v*100)
}

func (g GateResult) status() string {
	switch {
	case g.Fail:
		return "FAIL"
	case g.Blind && g.AllowedBlind:
		return "blind, allowed: " + g.blindness()
	case g.Blind:
		return "BLIND: " + g.blindness()
	case !g.Significant:
		return "ok (no significant change; no change larger than " + formatDetectable(g.Detectable) + ")"
	}
	return "ok (within limit)"
}

// blindness says what a blind gate could not see and what would resolve it.
func (g GateResult) blindness() string {
	s := fmt.Sprintf("sees only changes beyond %s", formatDetectable(g.Detectable))
	if g.SuggestRounds > 0 {
		return s + fmt.Sprintf("; --rounds %d would see %g%%", g.SuggestRounds, roundPct(100*math.Abs(g.limit())))
	}
	return s + fmt.Sprintf("; more than %d rounds needed: make the load longer or the machine quieter", MaxSuggestedRounds)
}

// limit reads the gate's limit back from its name ("p99:+10%").
func (g GateResult) limit() float64 {
	p, err := ParseGate(g.Gate)
	if err != nil {
		return math.NaN()
	}
	return p.Limit
}

// headline is the one-line verdict.
func (r *Report) headline() string {
	switch r.Verdict {
	case VerdictIdentical:
		return fmt.Sprintf("base and head binaries are byte-identical (sha256 %.12s): nothing to compare", r.Base.SHA256)
	case VerdictInconclusive:
		var blind []string
		for _, g := range r.Gates {
			if g.Blind && !g.AllowedBlind {
				blind = append(blind, g.Gate)
			}
		}
		if len(blind) == 0 || !abstats.CanDetect(r.Settings.Rounds, r.Settings.Rounds, r.Settings.Alpha) {
			return "inconclusive: too few rounds to ever show a significant difference"
		}
		return "inconclusive: gate " + strings.Join(blind, ", ") + " cannot see a change of its limit at this noise (more rounds, or --allow-blind)"
	}
	var failed []string
	for _, g := range r.Gates {
		if g.Fail {
			failed = append(failed, fmt.Sprintf("%s (%s)", g.Gate, formatChange(g.Change)))
		}
	}
	if r.SelfCheck {
		n := 0
		for _, res := range r.Results {
			if res.Comparison.Significant {
				n++
			}
		}
		s := fmt.Sprintf("self-check (A/A): %d of %d metrics differ significantly (about %.1f expected by chance at α=%g)",
			n, len(r.Results), float64(len(r.Results))*r.Settings.Alpha, r.Settings.Alpha)
		if len(failed) > 0 {
			return s + "; FALSE POSITIVE: gate " + strings.Join(failed, ", ") + " failed on identical code"
		}
		return s + "; no gate fired" + r.allowedBlindNote()
	}
	if len(failed) > 0 {
		return "regression: " + strings.Join(failed, ", ")
	}
	return "pass: no gate failed" + r.allowedBlindNote()
}

// allowedBlindNote names the blind gates --allow-blind let pass, and what
// each could see.
func (r *Report) allowedBlindNote() string {
	var blind []string
	for _, g := range r.Gates {
		if g.Blind && g.AllowedBlind {
			blind = append(blind, fmt.Sprintf("%s (sees %s)", g.Gate, formatDetectable(g.Detectable)))
		}
	}
	if len(blind) == 0 {
		return ""
	}
	return ", but blind gates were allowed: " + strings.Join(blind, ", ")
}

// regressedLabels lists the metrics that got significantly worse.
func (r *Report) regressedLabels() []string {
	var out []string
	for _, res := range r.Results {
		if res.Regressed {
			out = append(out, res.Label)
		}
	}
	return out
}

func (r *Report) scheduleLine() string {
	s := fmt.Sprintf("%d %s per side in ABBA order", r.Settings.Rounds, plural(r.Settings.Rounds, "round"))
	if r.Settings.Warmup > 0 {
		s += fmt.Sprintf(", %d warmup %s discarded", r.Settings.Warmup, plural(r.Settings.Warmup, "round"))
	}
	return s + fmt.Sprintf(", α=%g", r.Settings.Alpha)
}

// WriteText writes the benchstat-style table, gates, warnings and verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.SelfCheck {
		fmt.Fprintf(&b, "otelbench compare --self-check: %s against itself\n", r.Base.Short())
	} else {
		fmt.Fprintf(&b, "otelbench compare: base %s, head %s\n", r.Base.Short(), r.Head.Short())
	}
	if r.Verdict != VerdictIdentical {
		fmt.Fprintf(&b, "%s; load: %s\n\n", r.scheduleLine(), loadLine(r.Settings.Load))
		t := [][]string{{"", "base", "", "head", "", "vs base", "", "detects", ""},
			{"", "median", "± CI", "median", "± CI", "", "", fmt.Sprintf("(%.0f%% power)", 100*r.Settings.Power), ""}}
		for _, res := range r.Results {
			base, head := res.cells()
			c := res.Comparison
			t = append(t, []string{res.Label, base, "± " + c.Base.RangePct(), head, "± " + c.Head.RangePct(),
				c.Delta, "(" + c.Test + ")", formatDetectable(res.Detectable), res.marker()})
		}
		writeAligned(&b, t, "lrlrlrlrl")
		if len(r.Gates) > 0 {
			b.WriteString("\ngates (fail when the change is significant and beyond the limit):\n")
			g := [][]string{}
			for _, gr := range r.Gates {
				g = append(g, []string{"  " + gr.Gate, formatChange(gr.Change), fmt.Sprintf("p=%.3f", gr.P), gr.status()})
			}
			writeAligned(&b, g, "lrll")
		}
		if len(r.Warnings) > 0 {
			b.WriteString("\nwarnings:\n")
			for _, warn := range r.Warnings {
				fmt.Fprintf(&b, "  %s\n", warn)
			}
		}
		if reg := r.regressedLabels(); len(reg) > 0 {
			fmt.Fprintf(&b, "\nsignificantly worse: %s\n", strings.Join(reg, ", "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s (exit %d)\n", r.headline(), r.ExitCode)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report as GitHub-flavoured markdown for a pull
// request comment.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	title := map[string]string{
		VerdictPass: "pass", VerdictIdentical: "identical binaries",
		VerdictRegression: "REGRESSION", VerdictInconclusive: "inconclusive",
	}[r.Verdict]
	if r.SelfCheck {
		title = "self-check " + title
	}
	fmt.Fprintf(&b, "### otelbench compare: %s\n\n", title)
	fmt.Fprintf(&b, "**%s** (exit %d)\n\n", mdEscape(r.headline()), r.ExitCode)
	fmt.Fprintf(&b, "base `%s` · head `%s`", r.Base.Short(), r.Head.Short())
	if r.Verdict == VerdictIdentical {
		b.WriteString("\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, " · %s · load `%s`\n\n", r.scheduleLine(), loadLine(r.Settings.Load))
	fmt.Fprintf(&b, "| metric | base | head | vs base | test | detects (%.0f%% power) |\n|:--|--:|--:|--:|:--|--:|\n", 100*r.Settings.Power)
	for _, res := range r.Results {
		base, head := res.cells()
		c := res.Comparison
		delta := c.Delta
		if res.Regressed {
			delta = "**" + delta + "** (worse)"
		} else if res.Improved {
			delta += " (better)"
		}
		fmt.Fprintf(&b, "| %s | %s ± %s | %s ± %s | %s | %s | %s |\n", res.Label, base, c.Base.RangePct(),
			head, c.Head.RangePct(), delta, c.Test, formatDetectable(res.Detectable))
	}
	if len(r.Gates) > 0 {
		b.WriteString("\n| gate | change | p | result |\n|:--|--:|--:|:--|\n")
		for _, g := range r.Gates {
			st := g.status()
			if g.Fail {
				st = "**FAIL**"
			} else if g.Blind && !g.AllowedBlind {
				st = "**" + st + "**"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %.3f | %s |\n", g.Gate, formatChange(g.Change), g.P, st)
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n")
		for _, warn := range r.Warnings {
			fmt.Fprintf(&b, "> %s\n", mdEscape(warn))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(s)
}

func loadLine(args []string) string {
	if len(args) == 0 {
		return "(load defaults)"
	}
	return strings.Join(args, " ")
}

// writeAligned writes rows as columns padded to their widest cell, each
// column left- or right-aligned per align ("l"/"r"), trailing blanks cut.
func writeAligned(b *strings.Builder, rows [][]string, align string) {
	width := make([]int, len(align))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if align[i] == 'r' {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
