package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Uploads count against the tenant's requests_per_minute (a 429 past it,
// other tenants unaffected), and one upload of a tenant compiles at a
// time.
func TestUploadLimits(t *testing.T) {
	greedy := testdataWasm(t, "greedy.wasm")
	tenants := fmt.Appendf(nil, `{"defaults": {"requests_per_minute": 2},
  "tenants": [{"name": "a", "key_sha256": [%q]}, {"name": "b", "key_sha256": [%q]}]}`, tenancy.HashKey(keyA), tenancy.HashKey(keyB))
	s := startServer(t, tenants, 8)
	s.upload(t, keyA, withVersion(t, greedy, "v1"))
	s.upload(t, keyA, withVersion(t, greedy, "v2"))
	code, body := s.do(t, "POST", "/v1/plugins", keyA, withVersion(t, greedy, "v3"))
	require.Equal(t, http.StatusTooManyRequests, code, string(body))
	assert.Equal(t, "rate_limit_exceeded", errorOf(t, body).Code)
	s.upload(t, keyB, withVersion(t, greedy, "v3"))

	tb := s.srv.tenants.Tenants().Tenant("b")
	require.NotNil(t, tb)
	require.True(t, tb.StartUpload(), "b has no upload in flight")
	code, body = s.do(t, "POST", "/v1/plugins", keyB, withVersion(t, greedy, "v4"))
	require.Equal(t, http.StatusTooManyRequests, code, string(body))
	assert.Equal(t, "upload_in_progress", errorOf(t, body).Code)
	tb.EndUpload()
}
