package pipeline

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/buildtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"), goleak.Cleanup(buildtest.Exit))
}
