package server

import (
	"encoding/json"
	"net/http"
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
		raw, err := standardConfig(&samplingFields{Samplers: json.RawMessage(tt.body)}, 100)
		require.NoError(t, err, tt.body)
		var cfg map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &cfg))
		assert.JSONEq(t, tt.want, string(cfg["samplers"]), tt.body)
	}
	_, err := standardConfig(&samplingFields{Samplers: json.RawMessage(`["penalties", "top_k", "penalties"]`)}, 100)
	assert.ErrorContains(t, err, `"penalties" is listed twice`)
}
