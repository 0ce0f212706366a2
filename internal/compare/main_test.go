package compare

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/buildtest"
	"github.com/otelbench/otelbench/internal/racetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(buildtest.Exit)) }

// otelbench returns the path of the otelbench binary, built on first use. With -race it is built
// with -race too, reusing the archives the rest of `go test -race ./...` compiled.
func otelbench(t *testing.T) string {
	t.Helper()
	if racetest.Enabled {
		return buildtest.Go(t, "../../cmd/otelbench", "-race")
	}
	return buildtest.Go(t, "../../cmd/otelbench")
}
