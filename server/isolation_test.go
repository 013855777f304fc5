package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPluginFailuresAreIsolated: each way bad.wasm misbehaves fails its own
// request with an error naming the plugin and the cause; the same tenant's
// next request, and the other tenants', are unaffected.
func TestPluginFailuresAreIsolated(t *testing.T) {
	s := startServer(t, loadTenantsFile(), 8)
	sum := s.upload(t, keyB, testdataWasm(t, "bad.wasm"))
	goodBody := []byte(`{"prompt": "Hello", "max_tokens": 8, "seed": 5, "top_k": 40}`)
	code, lone := s.do(t, "POST", "/v1/completions", keyA, goodBody)
	require.Equal(t, http.StatusOK, code, string(lone))
	text := func(b []byte) string {
		var r completionResponse
		require.NoError(t, jsonUnmarshal(b, &r))
		return r.Choices[0].Text
	}
	for _, tc := range []struct {
		seed int
		kind string
	}{{1, "timeout"}, {2, "trap"}, {3, "memory"}, {4, "bad_token"}, {5, "bad_token"}} {
		t.Run(tc.kind, func(t *testing.T) {
			body := fmt.Appendf(nil, `{"prompt": "Hello", "max_tokens": 8, "seed": %d, "realizar": {"sampler": {"plugin": %q}}}`, tc.seed, sum)
			code, b := s.do(t, "POST", "/v1/completions", keyB, body)
			require.Equal(t, http.StatusInternalServerError, code, string(b))
			e := errorOf(t, b)
			assert.Equal(t, typePlugin, e.Type)
			assert.Equal(t, tc.kind, e.Code, e.Message)
			assert.Contains(t, e.Message, "sampler bad 1.0.0 (sha256 "+sum[:12])

			// The same tenant's next request with the same plugin and a benign seed works.
			code, b = s.do(t, "POST", "/v1/completions", keyB,
				fmt.Appendf(nil, `{"prompt": "Hello", "max_tokens": 4, "seed": 100, "realizar": {"sampler": {"plugin": %q}}}`, sum))
			require.Equal(t, http.StatusOK, code, string(b))
			// Another tenant's text is what it was alone.
			code, b = s.do(t, "POST", "/v1/completions", keyA, goodBody)
			require.Equal(t, http.StatusOK, code, string(b))
			assert.Equal(t, text(lone), text(b))
		})
	}
	assert.Equal(t, 0, s.host.LiveInstances(), "every request's instances are closed")
}
