package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A structured-output request leaves its sampler, grammar instance
// included, for the tenant's next request with the same schema: the second
// request instantiates nothing and answers the same; another schema or
// another tenant gets its own; the bounds hold.
func TestIdleGrammarSamplers(t *testing.T) {
	ts := startServer(t, testTenantsFile(), 64)
	s := ts.srv
	body := func(schema string) []byte {
		return []byte(`{"prompt":"Once upon a time","max_tokens":12,"seed":3,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}}`)
	}
	ask := func(key, schema string) string {
		code, resp := ts.do(t, "POST", "/v1/completions", key, body(schema))
		require.Equal(t, http.StatusOK, code, string(resp))
		return string(resp)
	}
	// The response's id and created differ; the text is what must not.
	text := func(resp string) string {
		var r completionResponse
		require.NoError(t, jsonUnmarshal([]byte(resp), &r))
		return r.Choices[0].Text
	}
	first := text(ask(keyA, `{"enum":["a","b"]}`))
	require.Equal(t, 1, s.idle.len())
	live := s.host.LiveInstances()
	assert.Equal(t, first, text(ask(keyA, `{"enum":["a","b"]}`)), "the same answer from a kept sampler")
	assert.Equal(t, 1, s.idle.len())
	assert.Equal(t, live, s.host.LiveInstances(), "no new instance for the same tenant and schema")

	ask(keyB, `{"enum":["a","b"]}`)
	assert.Equal(t, 2, s.idle.len(), "tenant b has its own")
	ask(keyA, `{"enum":["c","d"]}`)
	ask(keyA, `{"enum":["e","f"]}`)
	assert.Equal(t, 1+idleSamplersPerTenant, s.idle.len(), "tenant a keeps at most IdleSamplersPerTenant")
	assert.Nil(t, s.idle.take("a", "no such chain"))
}
