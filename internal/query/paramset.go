package query

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Attribute filter parameters: attr.<key>=<value> matches a record (log,
// span, metric point) attribute, resource.<key>=<value> an attribute of
// the record's resource.
const (
	AttrPrefix     = "attr."
	ResourcePrefix = "resource."
	// MaxAttrFilters bounds the attribute filters of one request: each is a
	// JSON lookup per row the query visits.
	MaxAttrFilters = 8
)

// AttrFilter is one attr.<key>=<value> or resource.<key>=<value> filter.
// It matches a string attribute equal to Value, or a number or boolean
// whose JSON text is Value (attr.http.status_code=200, attr.retry=true).
type AttrFilter struct {
	Resource bool // resource.<key>, else attr.<key>
	Key      string
	Value    string
}

// paramSet is what one endpoint accepts: the named parameters and, with
// attrs, attr.* and resource.* filters.
type paramSet struct {
	names []string
	attrs bool
}

// endpointParams holds every /api/v1 route's parameters, keyed by the
// route below Prefix. docs/api.md documents exactly these (api_doc_test.go
// holds the two together).
var endpointParams = map[string]paramSet{
	"/services":          {},
	"/logs":              {names: []string{"service", "severity_min", "q", "glob", "trace_id", "since", "until", "limit", "cursor"}, attrs: true},
	"/logs/stream":       {names: []string{"service", "severity_min", "q", "glob", "trace_id"}, attrs: true},
	"/traces":            {names: []string{"service", "since", "until", "min_duration", "error", "limit"}, attrs: true},
	"/traces/{trace_id}": {names: []string{"limit"}},
	"/metrics/names":     {names: []string{"service"}},
	"/metrics/series":    {names: []string{"name", "service", "since", "until", "step", "agg"}, attrs: true},
	// Served by the ingest server, which checks it with RefuseUnknownParams.
	StatsRoute: {},
}

// StatsRoute is the ingest server's counters endpoint, below Prefix.
const StatsRoute = "/stats"

// RefuseUnknownParams answers 400 naming the first parameter of r that route
// (below Prefix) does not take, the way every /api/v1 endpoint does, and
// reports whether it did. It lets a handler outside this package (the
// ingest server's /stats) share the one parameter table docs/api.md is held to.
func RefuseUnknownParams(w http.ResponseWriter, r *http.Request, route string) bool {
	if err := checkParams(r.URL.Query(), route); err != nil {
		writeError(w, err)
		return true
	}
	return false
}

// takes reports whether parameter k is one of the set.
func (ps paramSet) takes(k string) bool {
	return slices.Contains(ps.names, k) ||
		ps.attrs && (strings.HasPrefix(k, AttrPrefix) || strings.HasPrefix(k, ResourcePrefix))
}

// TakenParams returns the parameters of v that route (below Prefix) takes, each with its first
// value, leaving out empty ones: v narrowed to what a link to route may carry.
func TakenParams(v url.Values, route string) url.Values {
	ps := endpointParams[route]
	out := url.Values{}
	for k, vs := range v {
		if len(vs) > 0 && vs[0] != "" && ps.takes(k) {
			out.Set(k, vs[0])
		}
	}
	return out
}

// checkParams refuses a parameter the endpoint does not take (a typo such as
// start= for since= would otherwise return unfiltered data), naming it and
// listing what the endpoint accepts.
func checkParams(v url.Values, route string) error {
	ps := endpointParams[route]
	unknown := make([]string, 0, 1)
	for k := range v {
		if !ps.takes(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	accepted := strings.Join(ps.names, ", ")
	if ps.attrs {
		accepted += ", attr.<key>, resource.<key>"
	}
	if accepted == "" {
		accepted = "none"
	}
	hint := ""
	if strings.Contains(unknown[0], ".") {
		if ps.attrs {
			hint = " (to filter by an attribute write attr.<key>= or resource.<key>=, e.g. resource." + unknown[0] + "=)"
		} else {
			hint = " (this endpoint takes no attribute filters)"
		}
	}
	return paramErr(unknown[0], "unknown parameter%s; accepted: %s", hint, accepted)
}

// parseAttrFilters reads the attr.* and resource.* parameters, sorted by
// parameter name so the SQL they produce is stable.
func parseAttrFilters(v url.Values) ([]AttrFilter, error) {
	var keys []string
	for k := range v {
		if strings.HasPrefix(k, AttrPrefix) || strings.HasPrefix(k, ResourcePrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	if len(keys) > MaxAttrFilters {
		return nil, paramErr(keys[0], "more than %d attribute filters", MaxAttrFilters)
	}
	sort.Strings(keys)
	out := make([]AttrFilter, 0, len(keys))
	for _, k := range keys {
		f := AttrFilter{Resource: strings.HasPrefix(k, ResourcePrefix)}
		f.Key = strings.TrimPrefix(k, AttrPrefix)
		if f.Resource {
			f.Key = strings.TrimPrefix(k, ResourcePrefix)
		}
		switch {
		case f.Key == "":
			return nil, paramErr(k, "needs an attribute key after the prefix, like attr.http.route=/cart")
		case !utf8.ValidString(f.Key) || strings.ContainsAny(f.Key, "\"\\\x00"):
			return nil, paramErr(k, "the attribute key must be UTF-8 text without quotes or backslashes")
		case len(v[k]) != 1:
			return nil, paramErr(k, "given %d times; give each attribute filter once", len(v[k]))
		}
		f.Value = v[k][0]
		out = append(out, f)
	}
	return out, nil
}

// jsonPath is the SQLite JSON path of the top-level key k (parseAttrFilters
// refuses keys holding a quote or backslash, which the path cannot quote).
func jsonPath(k string) string { return `$."` + k + `"` }

// attrPred is the SQL predicate matching f against the JSON attribute map in
// column col: a string attribute by its value (->>), a number or boolean by
// its JSON text (->).
func attrPred(col string, f AttrFilter) (string, []any) {
	p := jsonPath(f.Key)
	return "(" + col + " ->> ? = ? OR " + col + " -> ? = ?)", []any{p, f.Value, p, f.Value}
}
