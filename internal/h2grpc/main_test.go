package h2grpc

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine running: every
// connection's reader must end with its Client.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
