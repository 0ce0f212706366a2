package ingestsrv

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(runChild(dir)) // the kill -9 test's server process
	}
	goleak.VerifyTestMain(m)
}
