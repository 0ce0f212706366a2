package otlpgen

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// logTemplate is a log line as a service writes it: fixed text with variable parts ({...}),
// at a severity, with a weight in the mix. The mix is roughly what application logs at INFO
// level show: mostly INFO, some DEBUG left on, a tenth WARN, a few ERRORs.
type logTemplate struct {
	weight int
	sev    plog.SeverityNumber
	text   string
	parts  []string // filled in order by logPart
}

var logTemplates = []logTemplate{
	{22, plog.SeverityNumberInfo, "{method} {route} completed status={status} duration={ms}ms", []string{"method", "route", "status", "ms"}},
	{12, plog.SeverityNumberInfo, "order {id} placed by user {user} items={n} total={amount} USD", []string{"id", "user", "n", "amount"}},
	{10, plog.SeverityNumberInfo, "user {user} signed in from {ip}", []string{"user", "ip"}},
	{8, plog.SeverityNumberInfo, "payment {id} authorized amount={amount} currency=USD", []string{"id", "amount"}},
	{8, plog.SeverityNumberInfo, "published event order.created to topic {topic} partition={n} offset={offset}", []string{"topic", "n", "offset"}},
	{10, plog.SeverityNumberDebug, "cache {hit} for key product:{id}", []string{"hit", "id"}},
	{4, plog.SeverityNumberDebug, "resolved {host} to {ip} in {ms}ms", []string{"host", "ip", "ms"}},
	{6, plog.SeverityNumberWarn, "slow query: duration={ms}ms statement=\"SELECT id, sku, qty FROM inventory WHERE sku = $1\"", []string{"ms"}},
	{3, plog.SeverityNumberWarn, "retrying request to {host} (attempt {n}/3): connection reset by peer", []string{"host", "n"}},
	{2, plog.SeverityNumberWarn, "connection pool near capacity: active={n} idle=0 waiting={n}", []string{"n", "n"}},
	{4, plog.SeverityNumberError, "failed to charge card for order {id}: upstream payment timed out after {ms}ms", []string{"id", "ms"}},
	{3, plog.SeverityNumberError, "unhandled exception in {route}: {exception}", []string{"route", "exception"}},
}

var (
	logTemplateTotal int
	httpMethods      = [...]string{"GET", "GET", "GET", "POST", "PUT", "DELETE"}
	httpRoutes       = [...]string{"/api/products/{id}", "/api/cart", "/api/checkout", "/api/orders/{id}", "/api/recommendations", "/api/currency/convert", "/api/shipping/quote", "/api/ads"}
	topics           = [...]string{"orders", "payments", "shipments", "inventory-events"}
	hosts            = [...]string{"payment.shop.svc.cluster.local", "cart.shop.svc.cluster.local", "postgres.db.svc.cluster.local", "redis.cache.svc.cluster.local"}
)

func init() {
	for _, t := range logTemplates {
		logTemplateTotal += t.weight
	}
}

// stackTrace is what an unhandled exception's log line carries after its message.
const stackTrace = `java.lang.IllegalStateException: cart is empty
	at shop.checkout.CheckoutService.placeOrder(CheckoutService.java:142)
	at shop.checkout.CheckoutController.checkout(CheckoutController.java:58)
	at jdk.internal.reflect.GeneratedMethodAccessor91.invoke(Unknown Source)
	at org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:883)
	at org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:166)`

// logPart returns a value for a variable part of a template.
func (g *generator) logPart(name string) string {
	r := g.rng
	switch name {
	case "method":
		return httpMethods[r.IntN(len(httpMethods))]
	case "route":
		return httpRoutes[r.IntN(len(httpRoutes))]
	case "status":
		return [...]string{"200", "200", "200", "200", "201", "204", "400", "404"}[r.IntN(8)]
	case "ms":
		return strconv.Itoa(int(math.Exp(r.NormFloat64()*0.8 + 3))) // log-normal around 20 ms
	case "id":
		return strconv.FormatUint(r.Uint64()>>16, 36)
	case "user":
		return "u" + strconv.Itoa(r.IntN(50_000))
	case "n":
		return strconv.Itoa(1 + r.IntN(12))
	case "amount":
		return strconv.Itoa(r.IntN(500)) + "." + strconv.Itoa(10+r.IntN(90))
	case "ip":
		return "10." + strconv.Itoa(r.IntN(256)) + "." + strconv.Itoa(r.IntN(256)) + "." + strconv.Itoa(1+r.IntN(254))
	case "topic":
		return topics[r.IntN(len(topics))]
	case "offset":
		return strconv.Itoa(r.IntN(10_000_000))
	case "hit":
		return [...]string{"hit", "hit", "hit", "miss"}[r.IntN(4)]
	case "host":
		return hosts[r.IntN(len(hosts))]
	case "exception":
		return stackTrace
	}
	return name
}

// logLine returns a body from a random template, and its severity. With BodyBytes > 0 the line
// gets key=value context until it reaches a log-normal length around BodyBytes, so lengths
// spread as real logs do: most short, a long tail.
func (g *generator) logLine() (string, plog.SeverityNumber) {
	w := g.rng.IntN(logTemplateTotal)
	t := logTemplates[0]
	for _, c := range logTemplates {
		if w < c.weight {
			t = c
			break
		}
		w -= c.weight
	}
	var b strings.Builder
	text, parts := t.text, t.parts
	for len(parts) > 0 {
		i := strings.IndexByte(text, '{')
		j := strings.IndexByte(text[i:], '}')
		b.WriteString(text[:i])
		b.WriteString(g.logPart(parts[0]))
		text, parts = text[i+j+1:], parts[1:]
	}
	b.WriteString(text)
	if n := g.cfg.BodyBytes; n > 0 {
		want := min(int(float64(n)*math.Exp(g.rng.NormFloat64()*0.5)), MaxBodyBytes, 8*n)
		for b.Len() < want {
			off := g.rng.IntN(g.cfg.BodyBytes + 1)
			chunk := g.bodyText[off : off+min(24, want-b.Len(), len(g.bodyText)-off)]
			b.WriteString(" ctx=")
			b.WriteString(chunk)
		}
	}
	return b.String(), t.sev
}

// logs returns one request's worth of log records for one service instance.
func (g *generator) logs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	g.putResource(rl.Resource().Attributes(), g.randomResource())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("shop/logger")
	sl.Scope().SetVersion("1.4.0")
	recs := sl.LogRecords()
	recs.EnsureCapacity(g.cfg.Records)
	for i := range g.cfg.Records {
		r := recs.AppendEmpty()
		at := g.ts(time.Duration(i) * time.Microsecond)
		r.SetTimestamp(at)
		r.SetObservedTimestamp(at + 1000)
		body, sev := g.logLine()
		r.SetSeverityNumber(sev)
		r.SetSeverityText(severityText(sev))
		r.Body().SetStr(body)
		g.putAttrs(r.Attributes())
		// The ids are placeholders: Patch points them at a trace the run has sent.
		if g.rng.Float64() < g.cfg.LogTraceShare {
			r.SetTraceID(g.traceID(i))
			r.SetSpanID(g.spanID(i, 0))
			r.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
		}
	}
	return ld
}

func severityText(s plog.SeverityNumber) string {
	switch s {
	case plog.SeverityNumberDebug:
		return "DEBUG"
	case plog.SeverityNumberWarn:
		return "WARN"
	case plog.SeverityNumberError:
		return "ERROR"
	}
	return "INFO"
}
