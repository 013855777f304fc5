package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
)

// Error types, as OpenAI spells them.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuthentication = "authentication_error"
	typeNotFound       = "not_found_error"
	typeRateLimit      = "rate_limit_error"
	typeServer         = "server_error"
	typePlugin         = "plugin_error"
)

// APIError is an error with its HTTP status and OpenAI-style body
// {"error": {"message", "type", "param", "code"}}.
type APIError struct {
	Status  int    `json:"-"`
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param,omitempty"`
	Code    string `json:"code,omitempty"`
	// RetryAfter, when > 0, is sent as the Retry-After header (429, 503).
	RetryAfter time.Duration `json:"-"`
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

func badRequest(param, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: "invalid_value",
		Message: fmt.Sprintf(format, args...)}
}

func unsupported(param string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: "unsupported_parameter",
		Message: fmt.Sprintf("%s is not supported by this server", param)}
}

func notFound(code, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusNotFound, Type: typeNotFound, Code: code, Message: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON envelope of an APIError.
type errorBody struct {
	Error *APIError `json:"error"`
}

// writeError sends err as an OpenAI-style error. A non-APIError is a 500.
func writeError(w http.ResponseWriter, err error) {
	e := asAPIError(err)
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((e.RetryAfter+time.Second-1)/time.Second))))
	}
	writeJSON(w, e.Status, errorBody{Error: e})
}

// asAPIError maps any error to an APIError: plugin failures are named
// (the policy and the cause), engine refusals are 400s, the rest 500.
func asAPIError(err error) *APIError {
	var e *APIError
	if errors.As(err, &e) {
		return e
	}
	var pe *engine.PolicyError
	if errors.As(err, &pe) {
		// The Session names the chain (a *host.Sampler) and the host the
		// plugin inside it: report the innermost, which names the plugin.
		for inner := pe; errors.As(inner.Err, &inner); {
			pe = inner
		}
		return &APIError{Status: http.StatusInternalServerError, Type: typePlugin, Code: pluginFailureKind(err),
			Message: pe.Error()}
	}
	switch {
	case errors.Is(err, ErrUnavailable):
		return &APIError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "store_unavailable",
			RetryAfter: time.Second, Message: err.Error()}
	case errors.Is(err, engine.ErrContextExceeded):
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "context_length_exceeded", Message: err.Error()}
	case errors.Is(err, engine.ErrEmptyPrompt), errors.Is(err, engine.ErrBadToken), errors.Is(err, engine.ErrBadConfig):
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "invalid_value", Message: err.Error()}
	}
	return &APIError{Status: http.StatusInternalServerError, Type: typeServer, Message: err.Error()}
}

// pluginFailureKind names a plugin failure's cause for errors and metrics:
// "trap", "timeout", "memory", "bad_token", "failed", "bad_result" or "other".
func pluginFailureKind(err error) string {
	switch {
	case errors.Is(err, host.ErrPluginTimeout):
		return "timeout"
	case errors.Is(err, host.ErrPluginMemory):
		return "memory"
	case errors.Is(err, host.ErrPluginTrap):
		return "trap"
	case errors.Is(err, engine.ErrBadToken):
		return "bad_token"
	case errors.Is(err, host.ErrPluginFailed):
		return "failed"
	case errors.Is(err, host.ErrBadResult):
		return "bad_result"
	}
	return "other"
}

// writeJSON sends v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
