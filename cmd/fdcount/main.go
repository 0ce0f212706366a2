// Command fdcount counts the open file descriptors of Linux processes, with
// the procfs stat-size fast path (Linux 6.2+) and a getdents64 fallback.
//
//	fdcount PID...                 PID COMM FDS METHOD for each process
//	fdcount --all --top 10         the ten processes holding the most fds
//	fdcount --json --watch 1s PID  one JSON line per second until Ctrl-C
package main

import "github.com/otelbench/otelbench/internal/exitcode"

func main() { exitcode.Main("fdcount", newRootCmd().ExecuteContext) }
