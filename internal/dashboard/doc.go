// Package dashboard renders otelbench serve's stored telemetry as
// server-side HTML: services, logs with filters and a live tail, traces with
// an SVG waterfall, and metric charts as SVG. Templates use html/template, so
// everything that came from telemetry is escaped; the SVG builders escape
// every string they emit. The only script is static/tail.js, which opens the
// /api/v1/logs/stream Server-Sent Events tail and inserts rows with
// textContent (never innerHTML).
package dashboard
