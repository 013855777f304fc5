package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/pgtest"
	"github.com/realizar-host/realizar-host/internal/server"
)

// storedReply is the part of a Response the test reads.
type storedReply struct {
	ID    string `json:"id"`
	Store bool   `json:"store"`
	Usage struct {
		InputTokens int `json:"input_tokens"`
	} `json:"usage"`
}

// TestServeResponsesReplicas: two serve processes sharing one PostgreSQL
// (--store) share stored responses: one stored through A is continued
// with previous_response_id, read and deleted through B; another tenant
// reaches it through neither. With PostgreSQL stopped, the requests that
// need a stored response are 503 store_unavailable before any generation
// and the rest are served; once it is back nothing stored is lost. The
// OpenAI SDK does the replica switch too (testdata/sdk/replicas.mjs).
func TestServeResponsesReplicas(t *testing.T) {
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	bin := e2eBinary(t)
	model := serveModel(t)
	acme := newTenant(t, bin, url, "acme")
	beta := newTenant(t, bin, url, "beta")
	_, baseA, _ := startServe(t, bin, "--model", model, "--store", url)
	_, baseB, logsB := startServe(t, bin, "--model", model, "--store", url)

	post := func(base, key, body string) (int, []byte, storedReply) {
		t.Helper()
		code, b := send(t, "POST", base+"/v1/responses", key, []byte(body))
		var r storedReply
		if code == http.StatusOK {
			require.NoError(t, json.Unmarshal(b, &r), string(b))
		}
		return code, b, r
	}
	code, first, r1 := post(baseA, acme, `{"input": "Once upon a time", "max_output_tokens": 4, "temperature": 0}`)
	require.Equal(t, http.StatusOK, code, string(first))
	require.True(t, r1.Store)

	// Continued through B: the prompt holds the first turn's conversation.
	next := `{"input": "And then", "max_output_tokens": 4, "temperature": 0, "previous_response_id": "` + r1.ID + `"}`
	code, b, r2 := post(baseB, acme, next)
	require.Equal(t, http.StatusOK, code, string(b))
	code, b, alone := post(baseB, acme, `{"input": "And then", "max_output_tokens": 4, "temperature": 0, "store": false}`)
	require.Equal(t, http.StatusOK, code, string(b))
	assert.Greater(t, r2.Usage.InputTokens, alone.Usage.InputTokens+3,
		"the continued prompt holds the first turn (Once upon a time, and its answer)")
	code, b = send(t, "GET", baseB+"/v1/responses/"+r1.ID, acme, nil)
	require.Equal(t, http.StatusOK, code, string(b))
	assert.JSONEq(t, string(first), string(b), "read through B as A returned it")

	// Another tenant: a 404 on either replica, with nothing of acme's.
	for _, base := range []string{baseA, baseB} {
		for _, tc := range []struct{ method, path, body string }{
			{"GET", "/v1/responses/" + r1.ID, ""},
			{"DELETE", "/v1/responses/" + r1.ID, ""},
			{"POST", "/v1/responses", next},
		} {
			code, b := send(t, tc.method, base+tc.path, beta, []byte(tc.body))
			assert.Equal(t, http.StatusNotFound, code, "%s %s: %s", tc.method, tc.path, b)
			assert.NotContains(t, string(b), "Once upon")
		}
	}

	// Deleted through B: gone through A.
	code, b = send(t, "DELETE", baseB+"/v1/responses/"+r1.ID, acme, nil)
	require.Equal(t, http.StatusOK, code, string(b))
	code, b = send(t, "GET", baseA+"/v1/responses/"+r1.ID, acme, nil)
	assert.Equal(t, http.StatusNotFound, code, string(b))
	code, b, _ = post(baseA, acme, next)
	assert.Equal(t, http.StatusNotFound, code, string(b))

	// The same through the OpenAI SDK (npm openai, pinned in scripts/sdk-install.sh).
	sdkDir, err := filepath.Abs(filepath.Join("..", "..", ".cache", "sdk"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(sdkDir, "node_modules"))
	require.NoError(t, err, "the npm API clients are not installed: run scripts/sdk-install.sh (make test-deps)")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", filepath.Join("testdata", "sdk", "replicas.mjs"))
	node.Env = append(os.Environ(), "BASE_A="+baseA, "BASE_B="+baseB, "API_KEY="+acme, "OTHER_KEY="+beta,
		"MODEL="+strings.TrimSuffix(filepath.Base(model), ".gguf"), "SDK_DIR="+sdkDir)
	out, err := node.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "deleted through B, gone through A")

	// PostgreSQL goes away.
	code, b, kept := post(baseA, acme, `{"input": "Kept", "max_output_tokens": 2}`)
	require.Equal(t, http.StatusOK, code, string(b))
	require.NoError(t, pg.Stop())
	restarted := false
	defer func() {
		if !restarted {
			_ = pg.StartAgain()
		}
	}()
	within(t, 5*time.Second, "a stored response refused with a 503", func() bool {
		code, b, _ = post(baseB, acme, `{"input": "Hello", "max_output_tokens": 2}`)
		return code == http.StatusServiceUnavailable
	})
	var e struct{ Error server.APIError }
	require.NoError(t, json.Unmarshal(b, &e), string(b))
	assert.Equal(t, "store_unavailable", e.Error.Code)
	assert.Contains(t, e.Error.Message, "response store is unavailable")
	assert.Contains(t, e.Error.Message, "store: false")
	assert.NotContains(t, string(b), "127.0.0.1", "no database address")
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/responses", `{"input": "Hello", "max_output_tokens": 2, "stream": true}`},
		{"POST", "/v1/responses", `{"input": "Hi", "max_output_tokens": 2, "store": false, "previous_response_id": "` + kept.ID + `"}`},
		{"GET", "/v1/responses/" + kept.ID, ""},
		{"DELETE", "/v1/responses/" + kept.ID, ""},
	} {
		code, b := send(t, tc.method, baseB+tc.path, acme, []byte(tc.body))
		assert.Equal(t, http.StatusServiceUnavailable, code, "%s %s %s: %s", tc.method, tc.path, tc.body, b)
		assert.Contains(t, string(b), "store_unavailable")
	}
	// What needs no stored response is served.
	for _, tc := range []struct{ path, body string }{
		{"/v1/responses", `{"input": "Hello", "max_output_tokens": 2, "store": false}`},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 2}`},
		{"/v1/completions", `{"prompt": "Hello", "max_tokens": 2}`},
	} {
		code, b := send(t, "POST", baseB+tc.path, acme, []byte(tc.body))
		assert.Equal(t, http.StatusOK, code, "%s without the database: %s", tc.path, b)
	}

	require.NoError(t, pg.StartAgain())
	restarted = true
	back := within(t, 10*time.Second, "stored responses after the database is back", func() bool {
		code, _, _ := post(baseB, acme, `{"input": "Hi", "max_output_tokens": 2, "previous_response_id": "`+kept.ID+`"}`)
		return code == http.StatusOK
	})
	t.Logf("stored responses served %v after PostgreSQL restarted", back)
	// Each replica's listener reconnects on its own backoff: A may come
	// back after B, and answers 503 until it has.
	within(t, 10*time.Second, "replica A reads the stored response after the database is back", func() bool {
		code, b = send(t, "GET", baseA+"/v1/responses/"+kept.ID, acme, nil)
		return code != http.StatusServiceUnavailable
	})
	assert.Equal(t, http.StatusOK, code, "nothing lost: %s %s", b, logsB)
}
