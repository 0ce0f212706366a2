//go:build !linux

package store

func setThreadPriority(Priority) error { return errPriorityNotSupported }

func onMainThread() bool { return false }
