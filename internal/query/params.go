package query

import (
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otelbench/otelbench/internal/hexid"
)

// Limits on request parameters.
const (
	DefaultLogLimit   = 100
	MaxLogLimit       = 1000
	DefaultTraceLimit = 50
	MaxTraceLimit     = 1000
	// DefaultTraceSpans is how many spans GET /traces/{trace_id} returns
	// unless its limit says otherwise (~250 bytes of JSON a span, so ~50
	// MB); it holds the 161,000-span trace of docs/benchmarks/query.md.
	DefaultTraceSpans = 200_000
	// MaxTraceSpans is the largest limit GET /traces/{trace_id} takes.
	MaxTraceSpans = 1_000_000
	// MinSubstring is the shortest q the FTS5 trigram index can answer.
	MinSubstring = 3
	// MaxPatternLen bounds q and glob so a request cannot ask for a
	// pathological match.
	MaxPatternLen = 512
	// MaxSeriesPoints bounds (until-since)/step of a metric series.
	MaxSeriesPoints = 10000
	// DefaultSeriesPoints is the point count an unset step aims at.
	DefaultSeriesPoints = 120
	// DefaultWindow is the range when since is unset for metric series.
	DefaultWindow = time.Hour
)

// LogFilter selects log records. Zero fields do not filter.
type LogFilter struct {
	Service     string
	SeverityMin int32  // 1..24 (OTLP SeverityNumber)
	Q           string // case-insensitive substring of the body
	Glob        string // SQLite GLOB over the body (case-sensitive)
	TraceID     []byte // 16 bytes
	Since       int64  // unix ns, inclusive; 0 = unbounded
	Until       int64  // unix ns, exclusive; 0 = unbounded
	Attrs       []AttrFilter

	services  []string    // Service resolved by Reader.serviceNames
	resources resourceSet // resource.* resolved by Reader.resolveResources
}

// LogQuery is a LogFilter with paging.
type LogQuery struct {
	LogFilter
	Limit  int
	Cursor *Cursor
}

// TraceQuery selects trace summaries.
type TraceQuery struct {
	Service     string
	Since       int64
	Until       int64
	MinDuration time.Duration
	Error       *bool
	Limit       int
	Attrs       []AttrFilter // on the root span and its resource
}

// Agg names how raw points inside one step become a value.
type Agg string

// Aggregations of gauge and sum points within a step.
const (
	AggAvg   Agg = "avg"
	AggSum   Agg = "sum"
	AggMin   Agg = "min"
	AggMax   Agg = "max"
	AggLast  Agg = "last"
	AggCount Agg = "count"
	AggRate  Agg = "rate" // per-second increase of a cumulative sum
)

// SeriesQuery asks for one metric's time series.
type SeriesQuery struct {
	Name    string
	Service string
	Since   int64
	Until   int64
	Step    time.Duration
	Agg     Agg
	Attrs   []AttrFilter // attr.* on the points, resource.* on the streams' resources
}

var severityNames = map[string]int32{
	"trace": 1, "debug": 5, "info": 9, "warn": 13, "warning": 13, "error": 17, "fatal": 21,
}

// ParseLogQuery reads the /logs parameters. now anchors relative times.
func ParseLogQuery(v url.Values, now time.Time) (LogQuery, error) {
	f, err := ParseLogFilter(v, now)
	if err != nil {
		return LogQuery{}, err
	}
	q := LogQuery{LogFilter: f}
	if q.Limit, err = parseLimit(v, DefaultLogLimit, MaxLogLimit); err != nil {
		return LogQuery{}, err
	}
	if s := v.Get("cursor"); s != "" {
		c, err := parseCursor(s)
		if err != nil {
			return LogQuery{}, paramErr("cursor", "%v", err)
		}
		q.Cursor = &c
	}
	return q, nil
}

// ParseLogFilter reads the filters shared by /logs and /logs/stream.
func ParseLogFilter(v url.Values, now time.Time) (LogFilter, error) {
	var f LogFilter
	var err error
	f.Service = v.Get("service")
	if s := v.Get("severity_min"); s != "" {
		if f.SeverityMin, err = parseSeverity(s); err != nil {
			return f, err
		}
	}
	if f.Q, err = parsePattern(v, "q", MinSubstring); err != nil {
		return f, err
	}
	if f.Glob, err = parsePattern(v, "glob", 1); err != nil {
		return f, err
	}
	if s := v.Get("trace_id"); s != "" {
		if f.TraceID, err = ParseTraceID(s); err != nil {
			return f, err
		}
	}
	if f.Since, f.Until, err = parseRange(v, now); err != nil {
		return f, err
	}
	if f.Attrs, err = parseAttrFilters(v); err != nil {
		return f, err
	}
	return f, nil
}

// ParseTraceQuery reads the /traces parameters.
func ParseTraceQuery(v url.Values, now time.Time) (TraceQuery, error) {
	var q TraceQuery
	var err error
	q.Service = v.Get("service")
	if q.Since, q.Until, err = parseRange(v, now); err != nil {
		return q, err
	}
	if s := v.Get("min_duration"); s != "" {
		d, err := parseDuration(s)
		if err != nil || d < 0 {
			return q, paramErr("min_duration", "want a non-negative duration like 250ms, got %q", s)
		}
		q.MinDuration = d
	}
	if s := v.Get("error"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return q, paramErr("error", "want true or false, got %q", s)
		}
		q.Error = &b
	}
	if q.Limit, err = parseLimit(v, DefaultTraceLimit, MaxTraceLimit); err != nil {
		return q, err
	}
	if q.Attrs, err = parseAttrFilters(v); err != nil {
		return q, err
	}
	return q, nil
}

// ParseSeriesQuery reads the /metrics/series parameters. An unset since is
// DefaultWindow before until (or now); an unset step aims at
// DefaultSeriesPoints points.
func ParseSeriesQuery(v url.Values, now time.Time) (SeriesQuery, error) {
	var q SeriesQuery
	var err error
	if q.Name = v.Get("name"); q.Name == "" {
		return q, paramErr("name", "required")
	}
	q.Service = v.Get("service")
	if q.Since, q.Until, err = parseRange(v, now); err != nil {
		return q, err
	}
	if q.Until == 0 {
		q.Until = now.UnixNano()
	}
	if q.Since == 0 && v.Get("since") == "" {
		q.Since = max(q.Until, math.MinInt64+int64(DefaultWindow)) - int64(DefaultWindow)
	}
	if q.Since >= q.Until {
		return q, paramErr("since", "must be before until")
	}
	span := q.Until - q.Since
	if span < 0 { // overflowed: the steps' arithmetic would too
		return q, paramErr("since", "since to until spans more than 292 years")
	}
	if s := v.Get("step"); s != "" {
		if q.Step, err = parseDuration(s); err != nil || q.Step <= 0 {
			return q, paramErr("step", "want a positive duration like 30s or 1d, got %q", s)
		}
		if span/int64(q.Step) > MaxSeriesPoints {
			return q, paramErr("step", "too small: %d points exceed the limit of %d", span/int64(q.Step), MaxSeriesPoints)
		}
	} else {
		q.Step = time.Duration(max(span/DefaultSeriesPoints, int64(time.Second)))
	}
	q.Agg = Agg(v.Get("agg"))
	switch q.Agg {
	case "":
		q.Agg = AggAvg
	case AggAvg, AggSum, AggMin, AggMax, AggLast, AggCount, AggRate:
	default:
		return q, paramErr("agg", "want one of avg, sum, min, max, last, count, rate; got %q", q.Agg)
	}
	if q.Attrs, err = parseAttrFilters(v); err != nil {
		return q, err
	}
	return q, nil
}

func parseLimit(v url.Values, def, maxLimit int) (int, error) {
	s := v.Get("limit")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLimit {
		return 0, paramErr("limit", "want an integer from 1 to %d, got %q", maxLimit, s)
	}
	return n, nil
}

func parseSeverity(s string) (int32, error) {
	if n, ok := severityNames[strings.ToLower(s)]; ok {
		return n, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 24 {
		return 0, paramErr("severity_min", "want 1..24 or trace|debug|info|warn|error|fatal, got %q", s)
	}
	return int32(n), nil
}

func parsePattern(v url.Values, name string, minRunes int) (string, error) {
	s := v.Get(name)
	if s == "" {
		return "", nil
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return "", paramErr(name, "not valid UTF-8 text")
	}
	if n := utf8.RuneCountInString(s); n < minRunes {
		return "", paramErr(name, "needs at least %d characters (the trigram index cannot answer shorter substrings; use glob)", minRunes)
	} else if n > MaxPatternLen {
		return "", paramErr(name, "longer than %d characters", MaxPatternLen)
	}
	return s, nil
}

// ParseTraceID decodes a 32-hex-digit trace id; a bad one is a *ParamError.
func ParseTraceID(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return nil, paramErr("trace_id", "want 32 hex digits, got %q", s)
	}
	if hexid.IsZero(b) {
		return nil, paramErr("trace_id", "the all-zero trace id is invalid")
	}
	return b, nil
}

func parseRange(v url.Values, now time.Time) (since, until int64, err error) {
	if since, err = parseTime(v, "since", now); err != nil {
		return 0, 0, err
	}
	if until, err = parseTime(v, "until", now); err != nil {
		return 0, 0, err
	}
	if until == 0 && v.Get("until") != "" {
		// 0 means unbounded inside; a range that ends at the epoch holds
		// nothing stored from 0 up, which -1 says.
		until = -1
	}
	if since != 0 && until != 0 && since >= until {
		return 0, 0, paramErr("since", "must be before until")
	}
	return since, until, nil
}

// Times outside these cannot be held as int64 unix nanoseconds.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// parseTime accepts RFC 3339, integer unix nanoseconds (0 and up), or a
// duration (15m, 30d or -15m) meaning that long before now. A time outside
// 1678-2262, which int64 unix nanoseconds cannot hold, is refused.
func parseTime(v url.Values, name string, now time.Time) (int64, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if t.Before(minTime) || t.After(maxTime) {
			return 0, paramErr(name, "%q is outside the years 1678 to 2262 that unix nanoseconds can hold", s)
		}
		return t.UnixNano(), nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return n, nil
	} else if numErr, ok := err.(*strconv.NumError); ok && numErr.Err == strconv.ErrRange {
		return 0, paramErr(name, "%q does not fit int64 unix nanoseconds (years 1678 to 2262)", s)
	}
	if d, err := parseDuration(strings.TrimPrefix(s, "-")); err == nil && d > 0 {
		t := now.Add(-d)
		if t.Before(minTime) {
			return 0, paramErr(name, "%q ago is before 1678, which unix nanoseconds cannot hold", s)
		}
		return t.UnixNano(), nil
	}
	return 0, paramErr(name, "want RFC 3339, unix nanoseconds or a duration ago like 15m or 30d, got %q", s)
}

// parseDuration is time.ParseDuration that also takes whole or decimal days
// first: 30d, 1.5d, 1d12h.
func parseDuration(s string) (time.Duration, error) {
	i := strings.IndexByte(s, 'd')
	if i < 0 {
		return time.ParseDuration(s)
	}
	days, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || days < 0 || math.IsInf(days, 0) || math.IsNaN(days) {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	if days*24 > float64(math.MaxInt64/int64(time.Hour)) {
		return 0, fmt.Errorf("duration %q is longer than 292 years", s)
	}
	d := time.Duration(days * float64(24*time.Hour))
	if rest := s[i+1:]; rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || r < 0 || d > math.MaxInt64-r {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		d += r
	}
	return d, nil
}

// clampNaN returns NaN-free JSON numbers: NaN and ±Inf become nil.
func clampNaN(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}
