// Package bench is the one-command benchmark of otelbench: it starts the
// embedded ingest server (internal/ingestsrv) in this process on a temporary
// data directory and a free loopback port, drives it with loadgen, and then
// checks through GET /api/v1/stats that every record the load generator saw
// acknowledged was stored — "nothing lost" — or reports the exact
// difference per signal, with the process's peak RSS and CPU time.
//
// Server and generator share one process, so the RSS and CPU figures
// include the generator; the load report beside them says how much work it
// did.
package bench
