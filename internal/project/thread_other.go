//go:build !linux

package project

func lowerThread() error { return errLowerNotSupported }

func onMainThread() bool { return false }
