package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSamplerFieldsReachTheSampler: llama.cpp's top_n_sigma reaches the
// standard sampler: at a temperature of 5 a sigma so small that only the
// top logit survives gives the greedy text, and without it the text
// differs.
func TestSamplerFieldsReachTheSampler(t *testing.T) {
	s := startServer(t, nil, 8)
	complete := func(body string) string {
		code, b := s.do(t, "POST", "/v1/completions", "", []byte(body))
		require.Equal(t, http.StatusOK, code, string(b))
		var r struct {
			Choices []struct{ Text string } `json:"choices"`
		}
		require.NoError(t, json.Unmarshal(b, &r))
		require.Len(t, r.Choices, 1)
		return r.Choices[0].Text
	}
	greedy := complete(`{"prompt": "Once upon a time", "max_tokens": 24, "temperature": 0, "seed": 3}`)
	sigma := complete(`{"prompt": "Once upon a time", "max_tokens": 24, "temperature": 5, "top_n_sigma": 1e-9, "seed": 3}`)
	hot := complete(`{"prompt": "Once upon a time", "max_tokens": 24, "temperature": 5, "seed": 3}`)
	assert.Equal(t, greedy, sigma)
	assert.NotEqual(t, greedy, hot)
}

// TestStandardConfigSamplers: a request's samplers, a list or a
// ";"-separated string, reach the sampler's config as a list.
func TestStandardConfigSamplers(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`["top_k", "temp"]`, `["top_k","temp"]`},
		{`"top_k;temp"`, `["top_k","temp"]`},
		{`[]`, `[]`},
	} {
		raw, err := standardConfig(&samplingFields{samplingParams: samplingParams{Samplers: json.RawMessage(tt.body)}}, 100)
		require.NoError(t, err, tt.body)
		var cfg map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &cfg))
		assert.JSONEq(t, tt.want, string(cfg["samplers"]), tt.body)
	}
	_, err := standardConfig(&samplingFields{samplingParams: samplingParams{Samplers: json.RawMessage(`["penalties", "top_k", "penalties"]`)}}, 100)
	assert.ErrorContains(t, err, `"penalties" is listed twice`)
}

// TestMirostatAndDRYRouting: mirostat 2 selects the mirostat-v2 sampler,
// mirostat 1 the standard sampler's Mirostat; dry_multiplier > 0 adds the
// dry processor before the sampler, except where llama.cpp runs no DRY (a
// samplers order without dry, mirostat 1 or 2).
func TestMirostatAndDRYRouting(t *testing.T) {
	s := startServer(t, nil, 8)
	policies := func(body string) []string {
		code, b := s.do(t, "POST", "/v1/completions", "", []byte(body))
		require.Equal(t, http.StatusOK, code, string(b))
		var r completionResponse
		require.NoError(t, json.Unmarshal(b, &r))
		var names []string
		for _, p := range r.Realizar.Policies {
			names = append(names, strings.Fields(p)[1]) // "sampler standard 1.0.0 (sha256 …)"
		}
		return names
	}
	for _, tt := range []struct {
		fields string
		want   []string
	}{
		{`"mirostat": 2, "mirostat_tau": 4, "top_k": 40`, []string{"mirostat-v2"}},
		{`"mirostat": 1, "temperature": 0.8`, []string{"standard"}},
		{`"dry_multiplier": 0.8, "dry_sequence_breakers": ["\n", "."]`, []string{"dry", "standard"}},
		{`"dry_multiplier": 0.8, "samplers": ["top_k", "temperature"]`, []string{"standard"}},
		{`"dry_multiplier": 0.8, "samplers": "dry;top_k;temperature"`, []string{"dry", "standard"}},
		{`"dry_multiplier": 0.8, "mirostat": 1`, []string{"standard"}},
		{`"dry_multiplier": 0, "dry_base": 2`, []string{"standard"}},
	} {
		got := policies(`{"prompt": "Once upon a time", "max_tokens": 4, "seed": 1, ` + tt.fields + `}`)
		assert.Equal(t, tt.want, got, tt.fields)
	}
	// The standard sampler's Mirostat reaches it: mirostat_tau 0 drives mu
	// down to one candidate, the greedy text.
	complete := func(body string) string {
		code, b := s.do(t, "POST", "/v1/completions", "", []byte(body))
		require.Equal(t, http.StatusOK, code, string(b))
		var r completionResponse
		require.NoError(t, json.Unmarshal(b, &r))
		return r.Choices[0].Text
	}
	greedy := complete(`{"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0}`)
	assert.Equal(t, greedy, complete(`{"prompt": "Once upon a time", "max_tokens": 16, "mirostat": 1, "mirostat_tau": 0, "mirostat_eta": 1, "temperature": 1, "seed": 2}`))
}
