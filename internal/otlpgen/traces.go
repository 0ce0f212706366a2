package otlpgen

import (
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Trace shapes. A trace starts at a SERVER span (an HTTP request to the first service), crosses
// up to TraceServices services through CLIENT/SERVER pairs, and fills its other spans with the
// leaves real services make: database and cache calls (CLIENT), messages published (PRODUCER)
// and in-process work (INTERNAL). Every span carries the attributes of the current semantic
// conventions for its kind (http.request.method, url.path, http.route,
// http.response.status_code, server.address, db.system.name, messaging.system, ...), and lives
// in the ResourceSpans of its own service instance.

type spanRole uint8

const (
	roleHTTPServer spanRole = iota
	roleHTTPClient
	roleDB
	roleCache
	roleMessaging
	roleInternal
)

// leafRoles weighs the leaf spans: database calls dominate, then in-process work, cache reads
// and published messages.
var leafRoles = [...]spanRole{roleDB, roleDB, roleDB, roleInternal, roleInternal, roleInternal, roleCache, roleCache, roleMessaging, roleMessaging}

// spanNode is one span of a trace being built.
type spanNode struct {
	role       spanRole
	hop        int // index of the span's service in the trace
	parent     int // index of the parent span; -1 for the root
	start, end time.Duration
	span       ptrace.Span
	method     string
	route      string
	failed     bool
}

var (
	dbTables    = [...]string{"orders", "products", "carts", "payments", "shipments", "users"}
	dbOps       = [...]string{"SELECT", "SELECT", "SELECT", "INSERT", "UPDATE"}
	internalOps = [...]string{"validate order", "compute quote", "render cart", "apply discounts", "serialize response"}
)

// traces returns one request's worth of spans in trace trees of SpansPerTrace spans (the last
// may be smaller).
func (g *generator) traces() ptrace.Traces {
	td := ptrace.NewTraces()
	scopes := map[resourceID]ptrace.SpanSlice{}
	spansOf := func(r resourceID) ptrace.SpanSlice {
		if ss, ok := scopes[r]; ok {
			return ss
		}
		rs := td.ResourceSpans().AppendEmpty()
		g.putResource(rs.Resource().Attributes(), r)
		sc := rs.ScopeSpans().AppendEmpty()
		sc.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
		sc.Scope().SetVersion("0.63.0")
		scopes[r] = sc.Spans()
		return sc.Spans()
	}
	per := g.cfg.SpansPerTrace
	for n, first := 0, 0; first < g.cfg.Records; n, first = n+1, first+per {
		g.trace(n, min(per, g.cfg.Records-first), time.Duration(first)*time.Millisecond, spansOf)
	}
	return td
}

// trace appends trace number n of the payload, of size spans, starting at offset at.
func (g *generator) trace(n, size int, at time.Duration, spansOf func(resourceID) ptrace.SpanSlice) {
	hops := min(g.cfg.TraceServices, g.cfg.Services) - 1
	hops = max(0, min(hops, (size-1)/2))
	services := make([]resourceID, hops+1)
	for i, svc := range g.rng.Perm(g.cfg.Services)[:hops+1] {
		services[i] = resourceID{svc, g.rng.IntN(g.cfg.Instances)}
	}
	// Lay out the roles: leaves spread over the services, a CLIENT/SERVER pair per hop.
	nodes := make([]spanNode, 0, size)
	rootDur := time.Duration(math.Exp(g.rng.NormFloat64()*0.6+4.2) * float64(time.Millisecond)) // ~70 ms
	nodes = append(nodes, spanNode{role: roleHTTPServer, parent: -1, start: at, end: at + rootDur + time.Millisecond})
	leaves := size - 1 - 2*hops
	for hop := 0; hop <= hops; hop++ {
		for range leaves/(hops+1) + btoi(hop < leaves%(hops+1)) {
			nodes = g.child(nodes, leafRoles[g.rng.IntN(len(leafRoles))], hop)
		}
		if hop < hops {
			nodes = g.child(nodes, roleHTTPClient, hop)
			client := len(nodes) - 1
			c := nodes[client]
			d := c.end - c.start
			nodes = append(nodes, spanNode{role: roleHTTPServer, hop: hop + 1, parent: client,
				start: c.start + d/10, end: max(c.end-d/10, c.start+d/10+1)})
		}
	}
	if g.rng.Float64() < g.cfg.ErrorRate && len(nodes) > 1 {
		for k := 1 + g.rng.IntN(len(nodes)-1); k >= 0; k = nodes[k].parent {
			nodes[k].failed = true
		}
	}
	traceID := g.traceID(n)
	for k := range nodes {
		nd := &nodes[k]
		s := spansOf(services[nd.hop]).AppendEmpty()
		nd.span = s
		s.SetTraceID(traceID)
		s.SetSpanID(g.spanID(n, k))
		if nd.parent >= 0 {
			s.SetParentSpanID(nodes[nd.parent].span.SpanID())
		}
		s.SetStartTimestamp(g.ts(nd.start))
		s.SetEndTimestamp(g.ts(nd.end))
		next := ""
		if nd.role == roleHTTPClient {
			next = serviceName(services[nd.hop+1].svc)
		}
		g.describe(nd, next, nodes)
		g.putAttrs(s.Attributes())
	}
}

// child appends a span of role in service hop, whose parent is a random SERVER or INTERNAL span
// of that service, nested in the parent's time.
func (g *generator) child(nodes []spanNode, role spanRole, hop int) []spanNode {
	parent := -1
	seen := 0
	for k, nd := range nodes { // reservoir pick among the candidates
		if nd.hop == hop && (nd.role == roleHTTPServer || nd.role == roleInternal) {
			seen++
			if g.rng.IntN(seen) == 0 {
				parent = k
			}
		}
	}
	p := nodes[parent]
	d := p.end - p.start
	start := p.start + time.Duration(g.rng.Int64N(int64(d)/2+1))
	end := start + time.Duration(g.rng.Int64N(max(1, int64(p.end-start))))/2 + 1
	return append(nodes, spanNode{role: role, hop: hop, parent: parent, start: start, end: end})
}

// describe sets the name, kind, attributes and status of nd's span. next is the service a
// CLIENT span calls.
func (g *generator) describe(nd *spanNode, next string, nodes []spanNode) {
	switch nd.role {
	case roleHTTPServer, roleHTTPClient:
		g.describeHTTP(nd, next, nodes)
	default:
		g.describeBackend(nd)
	}
	if nd.failed {
		g.describeFailure(nd)
	}
}

// describeHTTP sets the name, kind and attributes of an HTTP SERVER or CLIENT span, after the
// HTTP semantic conventions. A SERVER span called by a CLIENT span takes its method and route.
func (g *generator) describeHTTP(nd *spanNode, next string, nodes []spanNode) {
	s := nd.span
	a := s.Attributes()
	status := int64(200)
	if nd.failed {
		status = 500
	}
	switch nd.role {
	case roleHTTPServer:
		nd.method, nd.route = httpMethods[g.rng.IntN(len(httpMethods))], httpRoutes[g.rng.IntN(len(httpRoutes))]
		if nd.parent >= 0 { // called by the CLIENT span before it
			nd.method, nd.route = nodes[nd.parent].method, nodes[nd.parent].route
		}
		method := nd.method
		s.SetName(method + " " + nd.route)
		s.SetKind(ptrace.SpanKindServer)
		a.PutStr("http.request.method", method)
		a.PutStr("url.scheme", "http")
		a.PutStr("url.path", g.fillRoute(nd.route))
		a.PutStr("http.route", nd.route)
		a.PutInt("http.response.status_code", status)
		a.PutStr("server.address", "shop.example.com")
		a.PutInt("server.port", 8080)
		a.PutStr("network.protocol.version", "1.1")
		a.PutStr("client.address", "10.0."+strconv.Itoa(g.rng.IntN(256))+"."+strconv.Itoa(1+g.rng.IntN(254)))
		a.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36")
	case roleHTTPClient:
		nd.method, nd.route = httpMethods[g.rng.IntN(len(httpMethods))], httpRoutes[g.rng.IntN(len(httpRoutes))]
		method := nd.method
		s.SetName(method)
		s.SetKind(ptrace.SpanKindClient)
		a.PutStr("http.request.method", method)
		a.PutStr("url.full", "http://"+next+":8080"+g.fillRoute(nd.route))
		a.PutStr("server.address", next)
		a.PutInt("server.port", 8080)
		a.PutInt("http.response.status_code", status)
	}
}

// describeBackend sets the name, kind and attributes of a database, cache, messaging or
// INTERNAL span.
func (g *generator) describeBackend(nd *spanNode) {
	s := nd.span
	a := s.Attributes()
	switch nd.role {
	case roleDB:
		op, table := dbOps[g.rng.IntN(len(dbOps))], dbTables[g.rng.IntN(len(dbTables))]
		s.SetName(op + " " + table)
		s.SetKind(ptrace.SpanKindClient)
		a.PutStr("db.system.name", "postgresql")
		a.PutStr("db.namespace", "shop")
		a.PutStr("db.collection.name", table)
		a.PutStr("db.operation.name", op)
		a.PutStr("db.query.text", dbQuery(op, table))
		a.PutStr("server.address", "postgres.db.svc.cluster.local")
		a.PutInt("server.port", 5432)
	case roleCache:
		op := [...]string{"GET", "GET", "SET", "MGET"}[g.rng.IntN(4)]
		s.SetName(op)
		s.SetKind(ptrace.SpanKindClient)
		a.PutStr("db.system.name", "redis")
		a.PutStr("db.operation.name", op)
		a.PutStr("db.namespace", "0")
		a.PutStr("server.address", "redis.cache.svc.cluster.local")
		a.PutInt("server.port", 6379)
	case roleMessaging:
		topic := topics[g.rng.IntN(len(topics))]
		s.SetName("send " + topic)
		s.SetKind(ptrace.SpanKindProducer)
		a.PutStr("messaging.system", "kafka")
		a.PutStr("messaging.operation.type", "send")
		a.PutStr("messaging.operation.name", "send")
		a.PutStr("messaging.destination.name", topic)
		a.PutStr("messaging.destination.partition.id", strconv.Itoa(g.rng.IntN(12)))
		a.PutStr("server.address", "kafka.queue.svc.cluster.local")
	case roleInternal:
		s.SetName(internalOps[g.rng.IntN(len(internalOps))])
		s.SetKind(ptrace.SpanKindInternal)
	}
}

// describeFailure sets the ERROR status of a failed span; a span that is not HTTP also gets
// an exception event.
func (g *generator) describeFailure(nd *spanNode) {
	s := nd.span
	a := s.Attributes()
	s.Status().SetCode(ptrace.StatusCodeError)
	if nd.role == roleHTTPServer || nd.role == roleHTTPClient {
		s.Status().SetMessage("HTTP 500")
		return
	}
	s.Status().SetMessage("upstream timeout")
	a.PutStr("error.type", "timeout")
	ev := s.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(g.ts(nd.end))
	ev.Attributes().PutStr("exception.type", "TimeoutError")
	ev.Attributes().PutStr("exception.message", "deadline exceeded after 5s")
}

// fillRoute returns a URL path of route with its {id} filled in.
func (g *generator) fillRoute(route string) string {
	if l := len(route); l > 5 && route[l-5:] == "/{id}" {
		return route[:l-4] + strconv.Itoa(1+g.rng.IntN(100_000))
	}
	return route
}

func dbQuery(op, table string) string {
	switch op {
	case "INSERT":
		return "INSERT INTO " + table + " (id, data, created_at) VALUES ($1, $2, $3)"
	case "UPDATE":
		return "UPDATE " + table + " SET data = $2, updated_at = now() WHERE id = $1"
	}
	return "SELECT * FROM " + table + " WHERE id = $1"
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
