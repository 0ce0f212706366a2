package otlpgen

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// generator holds the PRNG and the precomputed strings shared by every
// payload of a pool.
type generator struct {
	cfg      Config
	rng      *rand.Rand
	keys     []string // attribute keys attr.0 .. attr.N-1
	values   []string // attribute values val-0 .. val-K-1
	bodyText string   // source text for log bodies, 2*BodyBytes long
	nowNanos int64

	// ids maps the trace and span ids of the payload being built to their place: a trace id to
	// its trace's number in the payload, a span id to traceNumber<<16 | index in the trace.
	// The patch plan (plan.go) reads them to give each send ids of its own.
	traceIDs map[pcommon.TraceID]uint32
	spanIDs  map[pcommon.SpanID]uint64
}

func newGenerator(cfg Config) *generator {
	g := &generator{
		cfg:      cfg,
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x6f74656c62656e63)), // "otelbenc"
		nowNanos: cfg.BaseTime.UnixNano(),
	}
	g.keys = make([]string, cfg.Attrs)
	for i := range g.keys {
		g.keys[i] = "attr." + strconv.Itoa(i)
	}
	// Values are built lazily in attrValue for huge cardinalities; keep a
	// table for the common case so the pool build does not allocate per value.
	n := min(cfg.AttrCardinality, 4096)
	g.values = make([]string, n)
	for i := range g.values {
		g.values[i] = "val-" + strconv.Itoa(i)
	}
	g.bodyText = g.text(2 * cfg.BodyBytes)
	return g
}

// resetIDs starts the id bookkeeping of a new payload.
func (g *generator) resetIDs() {
	g.traceIDs = map[pcommon.TraceID]uint32{}
	g.spanIDs = map[pcommon.SpanID]uint64{}
}

var words = []string{
	"request", "completed", "user", "session", "cache", "miss", "hit", "db", "query",
	"timeout", "retry", "upstream", "payload", "accepted", "queued", "flushed", "order",
	"payment", "checkout", "inventory", "shard", "replica", "lag", "ms", "ok", "error",
}

// text returns n bytes of word-like ASCII.
func (g *generator) text(n int) string {
	b := make([]byte, 0, n+16)
	for len(b) < n {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[g.rng.IntN(len(words))]...)
	}
	return string(b[:n])
}

func (g *generator) attrValue() string {
	k := g.rng.IntN(g.cfg.AttrCardinality)
	if k < len(g.values) {
		return g.values[k]
	}
	return "val-" + strconv.Itoa(k)
}

// putAttrs fills m with cfg.Attrs string attributes of bounded cardinality.
func (g *generator) putAttrs(m pcommon.Map) {
	m.EnsureCapacity(len(g.keys) + 4)
	for _, k := range g.keys {
		m.PutStr(k, g.attrValue())
	}
}

// serviceNames are the services of a shop, as the OpenTelemetry demo has them.
var serviceNames = [...]string{
	"frontend", "checkout", "cart", "payment", "shipping", "product-catalog", "currency",
	"recommendation", "ad", "email", "quote", "accounting", "fraud-detection", "inventory",
}

// serviceName returns the service.name of service number svc.
func serviceName(svc int) string {
	if svc < len(serviceNames) {
		return serviceNames[svc]
	}
	return serviceNames[svc%len(serviceNames)] + "-" + strconv.Itoa(svc/len(serviceNames))
}

// resourceID is a service and one of its instances.
type resourceID struct{ svc, inst int }

// randomResource picks one of the Services×Instances resources.
func (g *generator) randomResource() resourceID {
	return resourceID{g.rng.IntN(g.cfg.Services), g.rng.IntN(g.cfg.Instances)}
}

// putResource fills m with the attributes of an instance of a service, in the semantic
// conventions' service, host and Kubernetes keys. The values depend on the resource only, so
// every payload of that instance carries the same resource.
func (g *generator) putResource(m pcommon.Map, r resourceID) {
	name := serviceName(r.svc)
	// A stable pseudo-random suffix per instance, as a ReplicaSet's pod names have.
	h := mix64(uint64(r.svc)<<32 | uint64(r.inst) ^ g.cfg.Seed)
	pod := name + "-" + strconv.FormatUint(h>>40, 36) + "-" + strconv.FormatUint(h&0xfffff, 36)
	node := "node-" + strconv.Itoa(int(h>>20&0xff)%max(8, g.cfg.Instances))
	m.EnsureCapacity(14)
	m.PutStr("service.name", name)
	m.PutStr("service.namespace", "shop")
	m.PutStr("service.version", "1."+strconv.Itoa(r.svc%4)+"."+strconv.Itoa(r.inst%3))
	m.PutStr("service.instance.id", pod)
	m.PutStr("host.name", node)
	m.PutStr("host.arch", "amd64")
	m.PutStr("os.type", "linux")
	m.PutStr("k8s.cluster.name", "bench")
	m.PutStr("k8s.namespace.name", "shop-"+strconv.Itoa(r.svc%3))
	m.PutStr("k8s.node.name", node)
	m.PutStr("k8s.deployment.name", name)
	m.PutStr("k8s.pod.name", pod)
	m.PutStr("telemetry.sdk.name", "opentelemetry")
	m.PutStr("telemetry.sdk.language", "go")
}

// ts returns a timestamp offset from the base time.
func (g *generator) ts(offset time.Duration) pcommon.Timestamp {
	return pcommon.Timestamp(g.nowNanos + int64(offset))
}

// traceID returns a new random trace id and books it as trace number n of the payload.
func (g *generator) traceID(n int) pcommon.TraceID {
	var id pcommon.TraceID
	for {
		binary.BigEndian.PutUint64(id[:8], g.rng.Uint64())
		binary.BigEndian.PutUint64(id[8:], g.rng.Uint64()|1) // never all-zero
		if _, dup := g.traceIDs[id]; !dup {
			break
		}
	}
	g.traceIDs[id] = uint32(n)
	return id
}

// spanID returns a new random span id and books it as span k of trace number n.
func (g *generator) spanID(n, k int) pcommon.SpanID {
	var id pcommon.SpanID
	for {
		binary.BigEndian.PutUint64(id[:], g.rng.Uint64()|1)
		if _, dup := g.spanIDs[id]; !dup {
			break
		}
	}
	g.spanIDs[id] = uint64(n)<<16 | uint64(k)
	return id
}

// mix64 is the splitmix64 finalizer: a bijection of uint64 that scatters its bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
