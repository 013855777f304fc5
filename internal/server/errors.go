package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/tenancy"
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

// chatOnly is a 400 for a field /v1/completions refuses that
// /v1/chat/completions takes (tools, tool_choice).
func chatOnly(param string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: "unsupported_parameter",
		Message: fmt.Sprintf("%s is supported on /v1/chat/completions only, not /v1/completions", param)}
}

func notFound(code, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusNotFound, Type: typeNotFound, Code: code, Message: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON envelope of an APIError.
type errorBody struct {
	Error *APIError `json:"error"`
}

// writeError sends e as an OpenAI-style error.
func writeError(w http.ResponseWriter, e *APIError) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((e.RetryAfter+time.Second-1)/time.Second))))
	}
	writeJSON(w, e.Status, errorBody{Error: e})
}

// paramError is a failure of a plugin the request field param chose or
// configured ("realizar.processors[1]", "stop", "response_format"): a
// plugin_error's param.
type paramError struct {
	param string
	err   error
}

func (e *paramError) Error() string { return e.err.Error() }
func (e *paramError) Unwrap() error { return e.err }

// constraintFields are the request fields that configure the built-in
// grammar or JSON processor.
var constraintFields = map[string]bool{"response_format": true, "text.format": true, "output_format": true, "json_schema": true, "grammar": true, "tools": true}

// codeInternal marks the 500 for an error that is not the client's: its
// message is generic, the detail goes to the log under the request id.
const codeInternal = "internal_error"

// asAPIError maps any error to an APIError: a tenant's limit
// (tenancy.LimitError) is a 429 with its code and Retry-After, a missing or
// unknown key a 401; a plugin's failure names the plugin, the phase, the
// cause and the plugin's last log line (the tenant's own plugin, or a
// built-in its request configured); engine
// refusals are 400s; anything else (a store's I/O error, which may name a
// path) is a generic 500 with codeInternal.
func asAPIError(err error) *APIError {
	var e *APIError
	if errors.As(err, &e) {
		return e
	}
	var lim *tenancy.LimitError
	if errors.As(err, &lim) {
		return &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: lim.Code, RetryAfter: lim.RetryAfter,
			Message: lim.Msg}
	}
	var plug *host.PluginError
	if errors.As(err, &plug) {
		var pp *paramError
		if errors.As(err, &pp) && constraintFields[pp.param] && errors.Is(err, engine.ErrNoTokenAllowed) {
			// the built-in grammar or JSON processor left no token: the
			// grammar cannot go on in this vocabulary (or its mask and its
			// matcher disagreed); the request's, not the server's, and no
			// plugin internals in the message
			return &APIError{Status: http.StatusUnprocessableEntity, Type: typePlugin, Code: "no_token_allowed", Param: pp.param,
				Message: "the output constrained by " + pp.param + " reached a point where no token of the model's vocabulary continues it; no output was returned"}
		}
		if pp != nil && errors.Is(err, host.ErrBadConfig) {
			// the plugin refused the config the request's field gave it
			// (a grammar processor's malformed grammar): the client's
			// error, a 400 naming the field, with the plugin's reason
			return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "invalid_plugin_config", Param: pp.param,
				Message: plug.Error()}
		}
		e := &APIError{Status: http.StatusInternalServerError, Type: typePlugin, Code: pluginFailureKind(err),
			Message: plug.Error()}
		if pp != nil {
			e.Param = pp.param
		}
		return e
	}
	var pe *engine.PolicyError
	if errors.As(err, &pe) { // a policy that is not a plugin: the engine's own message
		return &APIError{Status: http.StatusInternalServerError, Type: typePlugin, Code: pluginFailureKind(err),
			Message: pe.Error()}
	}
	switch {
	case errors.Is(err, tenancy.ErrNoKey):
		return &APIError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "missing_api_key", Message: tenancy.ErrNoKey.Error()}
	case errors.Is(err, tenancy.ErrBadKey):
		return &APIError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_api_key", Message: tenancy.ErrBadKey.Error()}
	case errors.Is(err, tenancy.ErrUnavailable):
		// The cause (the database's address, its driver's error) is the
		// operator's, not the tenant's: it goes to the log line.
		return &APIError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "store_unavailable",
			RetryAfter: time.Second, Message: "the tenant and plugin store is unavailable; retry shortly"}
	case errors.Is(err, forward.ErrContextExceeded):
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "context_length_exceeded", Message: err.Error()}
	case errors.Is(err, engine.ErrEmptyPrompt), errors.Is(err, forward.ErrBadToken), errors.Is(err, engine.ErrBadConfig):
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "invalid_value", Message: err.Error()}
	}
	return &APIError{Status: http.StatusInternalServerError, Type: typeServer, Code: codeInternal, Message: "internal server error"}
}

// clientError is err as the client is sent it (asAPIError), a generic
// 500's message giving the request id of ctx, under which the server
// logged the detail.
func clientError(ctx context.Context, err error) *APIError {
	e := asAPIError(err)
	if e.Code != codeInternal {
		return e
	}
	c := *e
	c.Message = fmt.Sprintf("internal server error (request %s)", requestID(ctx))
	return &c
}

// requestIDKey keys a request's id in its context.
type requestIDKey struct{}

// requestID is the id authed gave the request of ctx, "-" for none.
func requestID(ctx context.Context) string {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok {
		return id
	}
	return "-"
}

// newRequestID is a random 16-hex-digit request id.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// clientsLoadError says whether a host.Load error is the client's (the
// module or its config), which a 400 may describe, rather than the
// server's.
func clientsLoadError(err error) bool {
	for _, s := range []error{host.ErrNotWasm, host.ErrTooLarge, host.ErrMetadata, host.ErrABIVersion, host.ErrKind,
		host.ErrMissingExport, host.ErrForbiddenImport, host.ErrBadConfig, host.ErrPluginTrap, host.ErrPluginTimeout,
		host.ErrPluginMemory, host.ErrPluginFailed, host.ErrBadResult} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
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
	case errors.Is(err, forward.ErrBadToken):
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
