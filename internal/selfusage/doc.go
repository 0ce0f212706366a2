// Package selfusage reads this process's own resource use from getrusage: its CPU time (user plus
// system, in microseconds, finer than the 10 ms clock ticks of /proc/self/stat) and its peak
// resident set. Benchmarks report them beside wall time, which a shared machine inflates; bench and
// pipeline report the harness's own cost with them. Other processes are read from procfs by the
// packages that watch them (compare, pipeline).
package selfusage
