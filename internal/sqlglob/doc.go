// Package sqlglob matches strings against SQLite GLOB patterns in Go, with exactly SQLite's
// semantics ('*', '?', sets with ranges and '^', a leading ']' literal, an unterminated set
// matching nothing, case-sensitive): the live tail filters new records in Go, where one query
// feeds every subscriber. FuzzGlobMatchesSQLite holds it to SQLite itself.
package sqlglob
