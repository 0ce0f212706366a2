package dashboard

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/query"
	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a real store with the API and the dashboard served on loopback.
type env struct {
	st   *store.Store
	base string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := querytest.OpenStore(t)
	api := query.New(query.NewReader(st.ReadDB()), query.Config{Tail: query.TailConfig{Notify: st.ProjectedNotify}})
	d, err := New(api.Reader(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.MountOn(mux.Handle)
	d.MountOn(mux.Handle)
	return &env{st: st, base: querytest.Serve(t, mux, nil, api.Run)}
}
