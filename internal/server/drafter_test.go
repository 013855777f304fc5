package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDrafterPlugin: realizar.drafter names a drafter plugin — the
// embedded lookup, or a tenant's upload by sha256 — as a request's draft
// source: the text is the plain turn's; a drafter's wrong drafts are
// verified and rejected; a drafter that traps or drafts out of range costs
// its drafts (counted in realizar_plugin_failures_total), not the text;
// refusals name the field. (The fixture's random weights repeat nothing,
// so lookup has nothing to draft here; the draft package's equivalence
// test runs it on stories260K.)
func TestDrafterPlugin(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	const prompt = "Once upon a time there was a little dog. Once upon a time there was a little"
	turn := func(key string, realizar map[string]any) completionResponse {
		t.Helper()
		req := map[string]any{"prompt": prompt, "max_tokens": 48, "temperature": 0, "cache_prompt": false}
		if realizar != nil {
			req["realizar"] = realizar
		}
		body, err := json.Marshal(req)
		require.NoError(t, err)
		code, out := s.do(t, "POST", "/v1/completions", key, body)
		require.Equal(t, http.StatusOK, code, string(out))
		var r completionResponse
		require.NoError(t, json.Unmarshal(out, &r))
		return r
	}
	plain := turn(keyA, nil)
	liar := s.upload(t, keyA, testdataWasm(t, "drafter.wasm"))
	tests := []struct {
		name    string
		drafter map[string]any
		drafted bool // drafts verified and rejected
	}{
		{"embedded lookup", map[string]any{"plugin": "lookup"}, false},
		{"embedded lookup with a config", map[string]any{"plugin": "lookup", "config": map[string]any{"max_ngram": 3}}, false},
		{"an upload that lies", map[string]any{"plugin": liar, "config": map[string]any{"mode": 0}}, true},
		{"an upload that traps", map[string]any{"plugin": liar, "config": map[string]any{"mode": 1}}, false},
		{"an upload that drafts out of range", map[string]any{"plugin": liar, "config": map[string]any{"mode": 3}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := turn(keyA, map[string]any{"drafter": tt.drafter, "speculative": map[string]any{"draft_max": 6}})
			assert.Equal(t, plain.Choices[0].Text, got.Choices[0].Text)
			assert.Equal(t, plain.Choices[0].FinishReason, got.Choices[0].FinishReason)
			if tt.drafted {
				require.NotNil(t, got.Realizar.Drafts)
				assert.Greater(t, got.Realizar.Drafts.Drafted, got.Realizar.Drafts.Accepted)
			}
		})
	}
	rec := httptest.NewRecorder()
	s.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	assert.Contains(t, rec.Body.String(), `realizar_plugin_failures_total{kind="trap",tenant="a"} 1`)
	assert.Contains(t, rec.Body.String(), `realizar_plugin_failures_total{kind="bad_token",tenant="a"} 1`)

	for _, tt := range []struct {
		name, key, extra string
		code             int
		param            string
	}{
		{"a config lookup refuses", keyA, `"realizar":{"drafter":{"plugin":"lookup","config":{"max_draft":99}}}`, http.StatusBadRequest, "realizar.drafter"},
		{"not a drafter", keyA, `"realizar":{"drafter":{"plugin":"greedy"}}`, http.StatusBadRequest, "realizar.drafter"},
		{"no plugin", keyA, `"realizar":{"drafter":{}}`, http.StatusBadRequest, "realizar.drafter.plugin"},
		{"and lookup", keyA, `"realizar":{"drafter":{"plugin":"lookup"},"speculative":{"lookup":true}}`, http.StatusBadRequest, "realizar.drafter"},
		{"and a prediction", keyA, `"prediction":{"type":"content","content":"x"},"realizar":{"drafter":{"plugin":"lookup"}}`, http.StatusBadRequest, "realizar.drafter"},
		{"another tenant's upload", keyB, `"realizar":{"drafter":{"plugin":"` + liar + `"}}`, http.StatusNotFound, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out := s.do(t, "POST", "/v1/chat/completions", tt.key,
				[]byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,`+tt.extra+`}`))
			require.Equal(t, tt.code, code, string(out))
			if tt.param != "" {
				assert.Equal(t, tt.param, errorOf(t, out).Param, string(out))
			}
		})
	}
}
