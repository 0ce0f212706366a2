// Package tmpfstest mounts small tmpfs file systems (Linux) for the tests that fill a disk (the
// raw log's and the store's disk-full tests, serve's startup errors) or need one read-only.
package tmpfstest
