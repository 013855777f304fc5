package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/tenancy"
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
		Message: "no API key: send Authorization: Bearer KEY"}, asAPIError(tenancy.ErrNoKey))
	assert.Equal(t, &APIError{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_api_key",
		Message: "invalid API key"}, asAPIError(tenancy.ErrBadKey))
	e := asAPIError(fmt.Errorf("pgstore: %w: connection refused", tenancy.ErrUnavailable))
	assert.Equal(t, http.StatusServiceUnavailable, e.Status)
	assert.Equal(t, "store_unavailable", e.Code)
}
