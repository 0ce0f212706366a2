package dashboard

import (
	"fmt"
	"hash/fnv"
	"html"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/query"
)

// Waterfall geometry.
const (
	wfWidth  = 1100
	wfLabel  = 340
	wfRow    = 18
	wfTop    = 22
	wfBarMax = wfWidth - wfLabel - 10
)

// palette colours services; the index is a hash of the service name.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac", "#ff9da7", "#86bcb6"}

func serviceColor(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return palette[h.Sum32()%uint32(len(palette))]
}

func esc(s string) string { return html.EscapeString(s) }

// Waterfall renders the first maxRows spans of t (pre-order) as an SVG
// waterfall: one row per span, indented by depth, a bar placed on the
// trace's time axis, coloured by service, outlined red on error. Every
// string is escaped, so the result is safe to embed.
func Waterfall(t *query.TraceTree, maxRows int) template.HTML {
	spans := t.Spans
	if len(spans) > maxRows {
		spans = spans[:maxRows]
	}
	height := wfTop + len(spans)*wfRow + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="waterfall" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="trace waterfall">`,
		wfWidth, height, wfWidth, height)
	dur := float64(max(t.DurationNano, 1))
	// time axis: 5 ticks
	for i := 0; i <= 4; i++ {
		x := float64(wfLabel) + float64(wfBarMax)*float64(i)/4
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, x, wfTop-4, x, height)
		fmt.Fprintf(&b, `<text x="%.1f" y="12" font-size="10" text-anchor="middle" fill="#555">%s</text>`,
			x, esc(fmtDur(time.Duration(dur*float64(i)/4))))
	}
	for i, s := range spans {
		y := wfTop + i*wfRow
		x := float64(wfLabel) + float64(wfBarMax)*float64(s.StartTimeUnixNano-t.StartTimeUnixNano)/dur
		w := math.Max(1, float64(wfBarMax)*float64(s.EndTimeUnixNano-s.StartTimeUnixNano)/dur)
		stroke := ""
		if s.StatusCode == query.StatusError {
			stroke = ` stroke="#d62728" stroke-width="2"`
		}
		label := s.Service + " " + s.Name
		indent := min(s.Depth, 40) * 8
		fmt.Fprintf(&b, `<g class="span" data-span-id="%s"><title>%s</title>`, esc(s.SpanID),
			esc(fmt.Sprintf("%s: %s (%s)", s.Service, s.Name, fmtDur(time.Duration(s.EndTimeUnixNano-s.StartTimeUnixNano)))))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#222">%s</text>`, 4+indent, y+12, esc(truncate(label, (wfLabel-8-indent)/6)))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"%s/></g>`, x, y+2, w, wfRow-4, serviceColor(s.Service), stroke)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every interpolated string above is escaped
}

func truncate(s string, n int) string {
	n = max(n, 4)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	default:
		return fmt.Sprintf("%dns", d)
	}
}

// Line is one named line of a chart; NaN values leave gaps.
type Line struct {
	Name   string
	Times  []int64 // unix ns
	Values []float64
}

// Chart geometry.
const (
	chWidth  = 820
	chHeight = 220
	chLeft   = 64
	chRight  = 12
	chTop    = 24
	chBottom = 34
)

// Chart renders lines as an SVG line chart over [since, until) with a
// labelled y range and legend. Every string is escaped.
func Chart(title string, since, until int64, lines []Line) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		chWidth, chHeight, chWidth, chHeight, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="14" font-size="12" font-weight="bold">%s</text>`, chLeft, esc(title))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, v := range l.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	pw, ph := float64(chWidth-chLeft-chRight), float64(chHeight-chTop-chBottom)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#ccc"/>`, chLeft, chTop, pw, ph)
	if math.IsInf(lo, 1) {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle" fill="#777">no data</text></svg>`, float64(chLeft)+pw/2, float64(chTop)+ph/2)
		return template.HTML(b.String())
	}
	if hi == lo {
		hi, lo = hi+1, lo-math.Min(1, math.Abs(lo))
	}
	span := float64(max(until-since, 1))
	xOf := func(t int64) float64 { return float64(chLeft) + pw*float64(t-since)/span }
	yOf := func(v float64) float64 { return float64(chTop) + ph*(1-(v-lo)/(hi-lo)) }
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" text-anchor="end">%s</text>`, chLeft-4, chTop+8, esc(fmtNum(hi)))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" text-anchor="end">%s</text>`, chLeft-4, chHeight-chBottom, esc(fmtNum(lo)))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10">%s</text>`, chLeft, chHeight-chBottom+14, esc(time.Unix(0, since).UTC().Format("15:04:05")))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" text-anchor="end">%s</text>`, chWidth-chRight, chHeight-chBottom+14, esc(time.Unix(0, until).UTC().Format("15:04:05 UTC")))
	for i, l := range lines {
		color := palette[i%len(palette)]
		var d strings.Builder
		pen := false
		for j, v := range l.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || j >= len(l.Times) {
				pen = false
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, xOf(l.Times[j]), yOf(v))
			pen = true
		}
		fmt.Fprintf(&b, `<path class="line" d="%s" fill="none" stroke="%s" stroke-width="1.5"/>`, strings.TrimSpace(d.String()), color)
		lx := chLeft + i*130
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="10">%s</text>`,
			lx, chHeight-12, color, lx+14, chHeight-3, esc(truncate(l.Name, 18)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every interpolated string above is escaped
}

func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
