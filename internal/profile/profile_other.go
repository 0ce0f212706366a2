//go:build !linux

package profile

import "context"

// TraceSyscalls needs Linux; elsewhere it returns ErrNotSupported.
func TraceSyscalls(context.Context, SyscallConfig) (*SyscallReport, error) {
	return nil, ErrNotSupported
}

// ProfileCPU needs Linux; elsewhere it returns ErrNotSupported.
func ProfileCPU(context.Context, CPUConfig) (*CPUReport, error) {
	return nil, ErrNotSupported
}
