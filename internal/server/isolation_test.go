package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/tenancy"
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
			assert.Equal(t, "realizar.sampler", e.Param, "the field that chose the plugin")

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

// TestMidStreamPluginFailure: a plugin that fails after the stream has
// begun ends it with an SSE error event naming the plugin and the cause,
// then [DONE].
func TestMidStreamPluginFailure(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	wasm, err := os.ReadFile(filepath.Join("testdata", "latetrap.wasm"))
	require.NoError(t, err)
	sum := s.upload(t, keyC, wasm)
	code, b := s.do(t, "POST", "/v1/completions", keyC, fmt.Appendf(nil,
		`{"prompt": "Hello", "max_tokens": 16, "stream": true, "realizar": {"sampler": {"plugin": %q}}}`, sum))
	require.Equal(t, http.StatusOK, code, string(b))
	events := strings.Split(strings.TrimSpace(string(b)), "\n\n")
	require.GreaterOrEqual(t, len(events), 3, string(b))
	require.Equal(t, "data: [DONE]", events[len(events)-1])
	events = events[:len(events)-1]
	last := strings.TrimPrefix(events[len(events)-1], "data: ")
	e := errorOf(t, []byte(last))
	assert.Equal(t, "trap", e.Code)
	assert.Contains(t, e.Message, "sampler latetrap 1.0.0 (sha256 "+sum[:12])
	assert.Equal(t, "realizar.sampler", e.Param)
	for _, ev := range events[:len(events)-1] {
		assert.True(t, strings.HasPrefix(ev, "data: {\"id\""), "a text chunk: %s", ev)
	}

	// Through the official client: the stream reports the error.
	c := client(s, keyC)
	stream := c.Completions.NewStreaming(t.Context(), openai.CompletionNewParams{Model: "serve-fixture",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Hello")}, MaxTokens: openai.Int(16)},
		option.WithJSONSet("realizar", map[string]any{"sampler": map[string]any{"plugin": sum}}))
	n := 0
	for stream.Next() {
		n++
	}
	require.Error(t, stream.Err())
	assert.Contains(t, stream.Err().Error(), "latetrap")
	assert.Positive(t, n, "text was streamed before the failure")
}

func TestReadiness(t *testing.T) {
	h, err := host.New(t.Context(), testHostConfig(t))
	require.NoError(t, err)
	defer h.Close(t.Context())
	srv, err := New(Config{Tenants: tenancy.Anonymous(tenancy.Limits{}), Store: tenancy.NewMemStore(), Host: h, Builtins: plugins.Builtin,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ts := &testServer{URL: hs.URL}
	code, _ := ts.do(t, "GET", "/health", "", nil)
	assert.Equal(t, http.StatusOK, code)
	code, _ = ts.do(t, "GET", "/ready", "", nil)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	code, b := ts.do(t, "POST", "/v1/completions", "", []byte(`{"prompt": "hi"}`))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "loading", errorOf(t, b).Code)
	require.NoError(t, srv.SetModel(loadModel(t)))
	code, _ = ts.do(t, "GET", "/ready", "", nil)
	assert.Equal(t, http.StatusOK, code)
}
