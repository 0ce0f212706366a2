package otlpgen

import (
	"encoding/binary"
	"fmt"
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

// body returns a BodyBytes-long slice of the body text at a random offset.
func (g *generator) body() string {
	if g.cfg.BodyBytes == 0 {
		return ""
	}
	off := g.rng.IntN(g.cfg.BodyBytes + 1)
	return g.bodyText[off : off+g.cfg.BodyBytes]
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
	m.EnsureCapacity(len(g.keys))
	for _, k := range g.keys {
		m.PutStr(k, g.attrValue())
	}
}

// putResource fills m with the attributes of service number svc: service,
// host and Kubernetes semantic-convention keys.
func (g *generator) putResource(m pcommon.Map, svc int) {
	name := fmt.Sprintf("svc-%d", svc)
	m.EnsureCapacity(12)
	m.PutStr("service.name", name)
	m.PutStr("service.namespace", "otelbench")
	m.PutStr("service.version", "1."+strconv.Itoa(svc%4)+".0")
	m.PutStr("service.instance.id", fmt.Sprintf("%s-%08x", name, uint32(g.cfg.Seed)+uint32(svc)))
	m.PutStr("host.name", fmt.Sprintf("node-%d", svc%8))
	m.PutStr("host.arch", "amd64")
	m.PutStr("os.type", "linux")
	m.PutStr("k8s.cluster.name", "bench")
	m.PutStr("k8s.namespace.name", fmt.Sprintf("ns-%d", svc%3))
	m.PutStr("k8s.node.name", fmt.Sprintf("node-%d", svc%8))
	m.PutStr("k8s.deployment.name", name)
	m.PutStr("k8s.pod.name", fmt.Sprintf("%s-%05x", name, g.rng.Uint32()&0xfffff))
	m.PutStr("telemetry.sdk.name", "otelbench")
	m.PutStr("telemetry.sdk.language", "go")
}

func (g *generator) service() int { return g.rng.IntN(g.cfg.Services) }

// ts returns a timestamp offset from the base time.
func (g *generator) ts(offset time.Duration) pcommon.Timestamp {
	return pcommon.Timestamp(g.nowNanos + int64(offset))
}

func (g *generator) traceID() pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], g.rng.Uint64())
	binary.BigEndian.PutUint64(id[8:], g.rng.Uint64()|1) // never all-zero
	return id
}

func (g *generator) spanID() pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], g.rng.Uint64()|1)
	return id
}
