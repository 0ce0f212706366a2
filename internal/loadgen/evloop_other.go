//go:build !linux

package loadgen

import (
	"context"
	"errors"
)

const evSupported = false

type evLoop struct{}

func eventLoops(int) int { return 0 }

func newEvLoop(context.Context, context.Context, *runner, *h1Sender, int) (*evLoop, error) {
	return nil, errors.New("epoll event loop: Linux only")
}

func (*evLoop) run() {}
