package profile

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// buildDir holds the programs tests compile (helpers_linux_test.go).
var buildDir string

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if buildDir != "" {
			os.RemoveAll(buildDir)
		}
		os.Exit(code)
	}))
}
