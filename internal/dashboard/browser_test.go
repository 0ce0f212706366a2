package dashboard

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cdpage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelbench/otelbench/internal/query/querytest"
)

const chromiumPath = "/usr/bin/chromium"

// browser is a headless Chromium driven over the DevTools protocol, with
// every JavaScript dialog (alert/confirm/prompt) counted and dismissed.
type browser struct {
	ctx     context.Context
	dialogs atomic.Int32
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("browser tests need %s (Debian package chromium): %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	b := &browser{ctx: ctx}
	dialogs := make(chan struct{}, 16)
	if err := chromedp.Listen(ctx, func(ev any) { // starts the browser
		switch e := ev.(type) {
		case *cdpage.EventJavascriptDialogOpening:
			b.dialogs.Add(1)
			select {
			case dialogs <- struct{}{}:
			default:
			}
		case *runtime.EventExceptionThrown:
			t.Logf("page exception: %v", e.ExceptionDetails.Text)
		}
	}); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	// Dismiss dialogs off the event loop (Listen's fn must not call back).
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-dialogs:
				_, _ = chromedp.Call(ctx, cdpage.HandleJavaScriptDialog, cdpage.HandleJavaScriptDialogParams{Accept: false})
			}
		}
	}()
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it
		cancelCtx()
		cancelAlloc()
		<-done
	})
	return b
}

// do runs actions with a deadline.
func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// text returns the text of the first element matching css.
func (b *browser) text(t *testing.T, css string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("text of %s: %v", css, err)
	}
	return s
}

// eval evaluates a JavaScript expression.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	return v
}

const (
	xssBody  = `<script>alert("xss-body")</script><img src=x onerror=alert("xss-img")>`
	traceHex = "4bf92f3577b34da6a3ce929d0e0e4736"
)

func seed(t *testing.T, e *env) {
	t.Helper()
	now := time.Now()
	querytest.AppendLogs(t, e.st,
		querytest.LogSpec{Service: "checkout", Sev: plog.SeverityNumberInfo, Body: "order placed", At: now.Add(-3 * time.Second)},
		querytest.LogSpec{Service: "checkout", Sev: plog.SeverityNumberError, Body: xssBody, At: now.Add(-2 * time.Second), TraceID: traceHex},
	)
	ms := func(n int) time.Time { return now.Add(-time.Minute + time.Duration(n)*time.Millisecond) }
	querytest.AppendSpans(t, e.st,
		querytest.SpanSpec{Service: "frontend", TraceID: traceHex, SpanID: "00f067aa0ba902b7", Name: "GET /checkout", Start: ms(0), End: ms(200)},
		querytest.SpanSpec{Service: "checkout", TraceID: traceHex, SpanID: "00f067aa0ba902b8", ParentID: "00f067aa0ba902b7", Name: "PlaceOrder <b>bold</b>", Start: ms(20), End: ms(150)},
		querytest.SpanSpec{Service: "payment", TraceID: traceHex, SpanID: "00f067aa0ba902b9", ParentID: "00f067aa0ba902b8", Name: "Charge", Start: ms(40), End: ms(120), Err: true},
	)
	querytest.WaitProjected(t, e.st)
}

func TestBrowserPages(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	b := newBrowser(t)

	b.do(t, chromedp.Navigate(e.base+"/ui/"))
	services := b.text(t, "#services")
	for _, s := range []string{"checkout", "frontend", "payment"} {
		if !strings.Contains(services, s) {
			t.Errorf("services page lacks %q: %q", s, services)
		}
	}

	// Logs: the XSS probe renders as text and runs nothing.
	b.do(t, chromedp.Navigate(e.base+"/ui/logs"))
	logsText := b.text(t, "#logs")
	injected := eval[int](t, b, `document.querySelectorAll("#logs script, #logs img").length`)
	if !strings.Contains(logsText, xssBody) {
		t.Errorf("the XSS body is not visible as text; table text %q", logsText)
	}
	if injected != 0 {
		t.Errorf("the log body became %d elements", injected)
	}

	// Trace list and waterfall.
	b.do(t, chromedp.Navigate(e.base+"/ui/traces"))
	tracesText := b.text(t, "#traces")
	if !strings.Contains(tracesText, "frontend: GET /checkout") || !strings.Contains(tracesText, "error") {
		t.Errorf("trace list: %q", tracesText)
	}
	b.do(t, chromedp.Navigate(e.base+"/ui/traces/"+traceHex))
	rows := eval[int](t, b, `document.querySelectorAll("#waterfall svg g.span rect").length`)
	labels := eval[string](t, b, `Array.from(document.querySelectorAll("#waterfall g.span text")).map(e => e.textContent).join("|")`)
	if rows != 3 {
		t.Errorf("waterfall has %d span bars, want 3", rows)
	}
	if want := "frontend GET /checkout|checkout PlaceOrder <b>bold</b>|payment Charge"; labels != want {
		t.Errorf("waterfall labels: got %q, want %q", labels, want)
	}
	if n := b.dialogs.Load(); n != 0 {
		t.Errorf("%d JavaScript dialogs fired", n)
	}
}

func TestBrowserLiveTail(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	b := newBrowser(t)
	b.do(t, chromedp.Navigate(e.base+"/ui/logs?service=checkout"),
		chromedp.Click(chromedp.CSS("#tail-toggle")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-tail="live"]`)))
	// Sent after the page opened and the stream is live.
	probe := fmt.Sprintf(`tail probe %d <script>alert("tail")</script>`, time.Now().UnixNano())
	querytest.AppendLogs(t, e.st,
		querytest.LogSpec{Service: "other", Sev: plog.SeverityNumberInfo, Body: "not for this filter", At: time.Now()},
		querytest.LogSpec{Service: "checkout", Sev: plog.SeverityNumberWarn, Body: probe, At: time.Now()},
	)
	b.do(t, chromedp.WaitVisible(chromedp.CSS("#tail-rows tr.tailed")))
	got := b.text(t, "#tail-rows")
	if !strings.Contains(got, probe) {
		t.Errorf("tailed rows %q lack the probe", got)
	}
	if strings.Contains(got, "not for this filter") {
		t.Errorf("tail ignored the service filter: %q", got)
	}
	scripts := eval[int](t, b, `document.querySelectorAll("#tail-rows script").length`)
	if scripts != 0 || b.dialogs.Load() != 0 {
		t.Errorf("tail probe ran: %d script elements, %d dialogs", scripts, b.dialogs.Load())
	}
}
