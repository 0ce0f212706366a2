// Package query answers questions about what otelbench serve stored: log
// search (FTS5 trigram substring and GLOB), live log tail over Server-Sent
// Events, trace summaries and span trees, and metric series with percentiles
// computed from histogram buckets.
//
// It reads through the store's read-only pool (store.Store.ReadDB) with
// bound parameters only; user input is never spliced into SQL. The JSON API
// lives under /api/v1 and is mounted into the ingest server (behind its auth)
// with API.MountOn. The dashboard package renders the same data as HTML.
//
// Errors: a bad parameter is a *ParamError, answered 400 with
// {"error":"..."}; a missing trace is ErrNotFound, answered 404.
package query
