package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// TestTenancyErrors: tenancy's refusals, wrapped or not, are the 429s and
// 401s the server has always sent.
func TestTenancyErrors(t *testing.T) {
	lim := &tenancy.LimitError{Code: tenancy.CodeRate, RetryAfter: 20 * time.Second, Msg: "tenant a is over 3 requests per minute"}
	for _, err := range []error{lim, fmt.Errorf("admit: %w", lim)} {
		assert.Equal(t, &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limit_exceeded",
			RetryAfter: 20 * time.Second, Message: "tenant a is over 3 requests per minute"}, asAPIError(err))
	}
	assert.Equal(t, &APIError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "missing_api_key",
		Message: "no API key: send Authorization: Bearer KEY (or Anthropic's x-api-key: KEY)"}, asAPIError(tenancy.ErrNoKey))
	assert.Equal(t, &APIError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_api_key",
		Message: "invalid API key"}, asAPIError(tenancy.ErrBadKey))
	e := asAPIError(fmt.Errorf("pgstore: %w: connection refused", tenancy.ErrUnavailable))
	assert.Equal(t, http.StatusServiceUnavailable, e.Status)
	assert.Equal(t, "store_unavailable", e.Code)
}

// TestConstraintDeadEnd: the built-in grammar processor's empty mask (a
// grammar that cannot go on in the vocabulary, or a mask that disagreed
// with its matcher) is a 422 naming the request field, without the
// plugin's internals; a tenant's own processor's stays a plugin_error
// with its log line.
func TestConstraintDeadEnd(t *testing.T) {
	plug := &host.PluginError{Plugin: "processor grammar 1.0.0 (sha256 2b5644047386)", Phase: "step",
		LastLog: "[warn] internal detail", Err: fmt.Errorf("%w: the mask at 77 leaves no token", engine.ErrNoTokenAllowed)}
	for _, param := range []string{"response_format", "json_schema", "grammar", "tools"} {
		e := asAPIError(&paramError{param: param, err: &engine.PolicyError{Policy: "processor", Err: plug}})
		assert.Equal(t, http.StatusUnprocessableEntity, e.Status)
		assert.Equal(t, "no_token_allowed", e.Code)
		assert.Equal(t, param, e.Param)
		assert.NotContains(t, e.Message, "internal detail")
		assert.NotContains(t, e.Message, "sha256")
	}
	e := asAPIError(&paramError{param: "realizar.processors[0]", err: plug})
	assert.Equal(t, http.StatusInternalServerError, e.Status)
	assert.Contains(t, e.Message, "internal detail")
}
