// Package symbolize turns the raw instruction addresses of a stack trace into
// function names: user addresses through the process's memory mappings
// (/proc/PID/maps, with file offsets, so PIE and shared libraries work) and
// the ELF files behind them (Go pclntab via debug/gosym for file:line, else
// .symtab/.dynsym), kernel addresses through /proc/kallsyms.
package symbolize
