package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

var (
	// ErrNotFound reports that the requested object (a trace) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrTooManyTails reports that the live-tail subscriber limit is reached.
	ErrTooManyTails = errors.New("too many live-tail subscribers")
	// ErrTailStopped reports that the live tail has shut down.
	ErrTailStopped = errors.New("live tail stopped")
	// ErrBusy reports that too many heavy queries (trace trees, metric
	// series) are running; the API answers 503 with Retry-After.
	ErrBusy = errors.New("too many heavy queries at once")
)

// ParamError is a bad request parameter; the API answers it with 400.
type ParamError struct {
	Param string // the query parameter at fault
	Msg   string // what is wrong with it
}

func (e *ParamError) Error() string { return fmt.Sprintf("parameter %s: %s", e.Param, e.Msg) }

func paramErr(param, format string, args ...any) *ParamError {
	return &ParamError{Param: param, Msg: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON shape of every API error.
type errorBody struct {
	Error string `json:"error"`
	Param string `json:"param,omitempty"`
}

// writeJSON writes v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v) // the client went away; nothing useful to do
}

// StatusOf maps an error from this package to an HTTP status.
func StatusOf(err error) int {
	var pe *ParamError
	switch {
	case errors.As(err, &pe):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrTooManyTails), errors.Is(err, ErrTailStopped), errors.Is(err, ErrBusy):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// writeError answers err as JSON with the status StatusOf picks. Internal
// errors are not echoed verbatim beyond their message.
func writeError(w http.ResponseWriter, err error) {
	body := errorBody{Error: err.Error()}
	var pe *ParamError
	if errors.As(err, &pe) {
		body.Param = pe.Param
	}
	if StatusOf(err) == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, StatusOf(err), body)
}
