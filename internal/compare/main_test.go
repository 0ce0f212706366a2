package compare

import (
	"fmt"
	"os"
	"testing"

	"github.com/otelbench/otelbench/internal/buildtest"
	"github.com/otelbench/otelbench/internal/racetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := buildtest.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// otelbench returns the path of the otelbench binary, built on first use. With -race it is built
// with -race too, reusing the archives the rest of `go test -race ./...` compiled.
func otelbench(t *testing.T) string {
	t.Helper()
	if racetest.Enabled {
		return buildtest.Go(t, "../../cmd/otelbench", "-race")
	}
	return buildtest.Go(t, "../../cmd/otelbench")
}
