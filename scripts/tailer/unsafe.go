//go:build linux

package main

import "unsafe"

// unsafePointer points at the start of b, to read a kernel struct from it.
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
