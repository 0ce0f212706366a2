// Package compare answers "is my branch slower?": it builds two versions of
// an OTLP/HTTP server (git refs checked out as detached worktrees, or
// directories as they are), runs each under the same `otelbench load` in
// interleaved ABBA rounds with a fresh server, port and data directory every
// round, samples the server's CPU time, peak RSS and open fds from /proc,
// and compares the sides with benchstat's statistics (median, 95% interval,
// Mann–Whitney U at α = 0.05; see internal/abstats).
//
// Gates turn the comparison into an exit code a CI job can trust: a gate
// fails only when a change is significant and its estimated ratio lies
// beyond the limit; too few rounds to ever be significant is its own verdict
// (inconclusive), never a silent pass.
//
// Run does the work and returns a Report; the Report renders itself as a
// text table, GitHub markdown, JSON ("otelbench.compare/v1") or Go benchmark
// format (one line per side per round, for benchstat).
package compare
