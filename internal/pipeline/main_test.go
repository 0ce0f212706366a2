package pipeline

import (
	"fmt"
	"os"
	"testing"

	"github.com/otelbench/otelbench/internal/buildtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := buildtest.Run(m)
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
