package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

func TestAuthentication(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	body := []byte(`{"prompt": "hi", "max_tokens": 2}`)
	for _, tc := range []struct {
		name, method, path, key string
		want                    int
		code                    string
	}{
		{"no key", "POST", "/v1/completions", "", http.StatusUnauthorized, "missing_api_key"},
		{"wrong key", "POST", "/v1/completions", "sk-wrong", http.StatusUnauthorized, "invalid_api_key"},
		{"a key's hash is not a key", "POST", "/v1/completions", tenancy.HashKey(keyA), http.StatusUnauthorized, "invalid_api_key"},
		{"models without key", "GET", "/v1/models", "", http.StatusUnauthorized, "missing_api_key"},
		{"plugins without key", "GET", "/v1/plugins", "", http.StatusUnauthorized, "missing_api_key"},
		{"upload without key", "POST", "/v1/plugins", "", http.StatusUnauthorized, "missing_api_key"},
		{"tokenize without key", "POST", "/tokenize", "", http.StatusUnauthorized, "missing_api_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := s.do(t, tc.method, tc.path, tc.key, body)
			require.Equal(t, tc.want, code, string(b))
			e := errorOf(t, b)
			assert.Equal(t, tc.code, e.Code)
			assert.Equal(t, typeAuthentication, e.Type)
		})
	}
	t.Run("health and ready are open", func(t *testing.T) {
		for _, p := range []string{"/health", "/ready"} {
			code, _ := s.do(t, "GET", p, "", nil)
			assert.Equal(t, http.StatusOK, code, p)
		}
	})
}

// TestDuplicateAuthorization: two Authorization headers are a 400 before
// either key is looked at, whichever comes first and on every
// authenticated endpoint; one is authenticated as usual.
func TestDuplicateAuthorization(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	for _, tc := range []struct {
		name         string
		method, path string
		keys         []string
		want         int
	}{
		{"one key", "POST", "/v1/completions", []string{keyA}, http.StatusOK},
		{"valid then wrong", "POST", "/v1/completions", []string{keyA, "sk-wrong"}, http.StatusBadRequest},
		{"wrong then valid", "POST", "/v1/completions", []string{"sk-wrong", keyA}, http.StatusBadRequest},
		{"two tenants", "POST", "/v1/completions", []string{keyB, keyA}, http.StatusBadRequest},
		{"the same key twice", "POST", "/v1/completions", []string{keyA, keyA}, http.StatusBadRequest},
		{"plugins list", "GET", "/v1/plugins", []string{keyA, keyB}, http.StatusBadRequest},
		{"models", "GET", "/v1/models", []string{keyA, keyB}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader(`{"prompt": "hi", "max_tokens": 2}`)
			}
			req, err := http.NewRequest(tc.method, s.URL+tc.path, body)
			require.NoError(t, err)
			for _, k := range tc.keys {
				req.Header.Add("Authorization", "Bearer "+k)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tc.want, resp.StatusCode, string(b))
			if tc.want == http.StatusBadRequest {
				e := errorOf(t, b)
				assert.Equal(t, typeInvalidRequest, e.Type)
				assert.Equal(t, "duplicate_authorization", e.Code)
			}
		})
	}
}

// TestMetricsListener: the metrics, labelled by tenant name, are not on
// the API's listener, with a key or without; MetricsHandler serves them on
// a listener of their own.
func TestMetricsListener(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	code, b := s.do(t, "POST", "/v1/completions", keyA, []byte(`{"prompt": "hi", "max_tokens": 2}`))
	require.Equal(t, http.StatusOK, code, string(b))
	metrics := httptest.NewServer(s.srv.MetricsHandler())
	t.Cleanup(metrics.Close)
	for _, tc := range []struct {
		name, base, key string
		want            int
	}{
		{"API listener, no key", s.URL, "", http.StatusNotFound},
		{"API listener, a tenant's key", s.URL, keyA, http.StatusNotFound},
		{"metrics listener", metrics.URL, "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", tc.base+"/metrics", nil)
			require.NoError(t, err)
			if tc.key != "" {
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tc.want, resp.StatusCode, string(b))
			if tc.want == http.StatusOK {
				assert.Contains(t, string(b), `realizar_requests_total{endpoint="completions",outcome="ok",tenant="a"} 1`)
			} else {
				assert.NotContains(t, string(b), "realizar_")
				assert.Equal(t, "unknown_url", errorOf(t, b).Code)
			}
		})
	}
}

// TestCrossTenantPlugin: tenant B naming tenant A's plugin gets the same
// 404 as for a plugin nobody has, for use, listing and deletion.
func TestCrossTenantPlugin(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	sumA := s.upload(t, keyA, testdataWasm(t, "greedy8.wasm"))
	missing := "0000000000000000000000000000000000000000000000000000000000000000"
	use := func(sum string) []byte {
		return []byte(`{"prompt": "hi", "max_tokens": 2, "realizar": {"sampler": {"plugin": "` + sum + `"}}}`)
	}
	code, b := s.do(t, "POST", "/v1/completions", keyA, use(sumA))
	require.Equal(t, http.StatusOK, code, string(b))

	codeB, bodyB := s.do(t, "POST", "/v1/completions", keyB, use(sumA))
	codeM, bodyM := s.do(t, "POST", "/v1/completions", keyB, use(missing))
	require.Equal(t, http.StatusNotFound, codeB, string(bodyB))
	require.Equal(t, http.StatusNotFound, codeM)
	eB, eM := errorOf(t, bodyB), errorOf(t, bodyM)
	assert.Equal(t, eM.Code, eB.Code)
	assert.Equal(t, eM.Type, eB.Type)
	assert.Equal(t, bytes.ReplaceAll(bodyM, []byte(missing), []byte(sumA)), bodyB, "the two 404s differ beyond the sha256")

	// A prefix of an id is not accepted (README, Plugins), for its owner
	// either, and the 404 says what an id is.
	code, b = s.do(t, "POST", "/v1/completions", keyA, use(sumA[:8]))
	require.Equal(t, http.StatusNotFound, code, string(b))
	assert.Contains(t, errorOf(t, b).Message, "the whole sha256 (64 lowercase hex digits), not a prefix")

	code, b = s.do(t, "GET", "/v1/plugins", keyB, nil)
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, string(b), sumA)
	code, b = s.do(t, "GET", "/v1/plugins", keyA, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(b), sumA)

	code, _ = s.do(t, "DELETE", "/v1/plugins/"+sumA, keyB, nil)
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = s.do(t, "DELETE", "/v1/plugins/"+sumA, keyA, nil)
	assert.Equal(t, http.StatusOK, code)
	code, _ = s.do(t, "POST", "/v1/completions", keyA, use(sumA))
	assert.Equal(t, http.StatusNotFound, code, "a deleted plugin is gone")
}

func TestUploadValidation(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	for _, tc := range []struct {
		name string
		wasm []byte
		want int
		msg  string
	}{
		{"not wasm", testdataWasm(t, "notwasm.wasm"), http.StatusBadRequest, "not a valid WebAssembly module"},
		{"forbidden import", testdataWasm(t, "pathopen.wasm"), http.StatusBadRequest, "forbidden import"},
		{"socket import", testdataWasm(t, "sockaccept.wasm"), http.StatusBadRequest, "forbidden import"},
		{"no metadata", testdataWasm(t, "nometa.wasm"), http.StatusBadRequest, "metadata"},
		{"other ABI version", testdataWasm(t, "badversion.wasm"), http.StatusBadRequest, "ABI version"},
		{"over the tenant's 64 KiB", append(testdataWasm(t, "greedy.wasm"), make([]byte, 64<<10)...), http.StatusRequestEntityTooLarge, "over your limit"},
		{"empty", nil, http.StatusBadRequest, "not a valid WebAssembly module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := s.do(t, "POST", "/v1/plugins", keyA, tc.wasm)
			require.Equal(t, tc.want, code, string(b))
			assert.Contains(t, errorOf(t, b).Message, tc.msg)
		})
	}
	t.Run("a 1.8 MB Go guest fits tenant b's default limit", func(t *testing.T) {
		s.upload(t, keyB, testdataWasm(t, "greedy_go.wasm"))
	})
}

func TestBadRequests(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	for _, tc := range []struct {
		name, path, body, param string
		want                    int
	}{
		{"n > 1", "/v1/completions", `{"prompt": "hi", "n": 2}`, "n", 400},
		{"json schema", "/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_schema", "json_schema": {}}}`, "response_format", 400},
		{"tools", "/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}`, "tools[0].function", 400},
		{"five stops", "/v1/completions", `{"prompt": "hi", "stop": ["a","b","c","d","e"]}`, "stop", 400},
		{"echo", "/v1/completions", `{"prompt": "hi", "echo": true}`, "echo", 400},
		{"temperature", "/v1/completions", `{"prompt": "hi", "temperature": -1}`, "temperature", 400},
		{"presence_penalty", "/v1/completions", `{"prompt": "hi", "presence_penalty": 2.5}`, "presence_penalty", 400},
		{"xtc_threshold", "/v1/completions", `{"prompt": "hi", "xtc_threshold": 0.7}`, "xtc_threshold", 400},
		{"top_n_sigma", "/v1/completions", `{"prompt": "hi", "top_n_sigma": -2}`, "top_n_sigma", 400},
		{"mirostat 3", "/v1/completions", `{"prompt": "hi", "mirostat": 3}`, "mirostat", 400},
		{"mirostat_tau", "/v1/completions", `{"prompt": "hi", "mirostat": 1, "mirostat_tau": -1}`, "mirostat_tau", 400},
		{"mirostat 2 eta", "/v1/completions", `{"prompt": "hi", "mirostat": 2, "mirostat_eta": -1}`, "mirostat_eta", 400},
		{"mirostat 2 checks the rest", "/v1/completions", `{"prompt": "hi", "mirostat": 2, "top_p": 2}`, "top_p", 400},
		{"mirostat 2 bias", "/v1/completions", `{"prompt": "hi", "mirostat": 2, "logit_bias": {"5": 1}}`, "logit_bias", 400},
		{"dry_base", "/v1/completions", `{"prompt": "hi", "dry_multiplier": 0.8, "dry_base": 0.5}`, "dry_base", 400},
		{"dry_allowed_length", "/v1/completions", `{"prompt": "hi", "dry_allowed_length": -1}`, "dry_allowed_length", 400},
		{"dry_penalty_last_n", "/v1/completions", `{"prompt": "hi", "dry_multiplier": 1, "dry_penalty_last_n": -2}`, "dry_penalty_last_n", 400},
		{"dry_sequence_breakers", "/v1/completions", `{"prompt": "hi", "dry_multiplier": 1, "dry_sequence_breakers": []}`, "dry_sequence_breakers", 400},
		{"samplers unknown", "/v1/completions", `{"prompt": "hi", "samplers": ["top_k", "bogus"]}`, "samplers", 400},
		{"samplers not offered", "/v1/completions", `{"prompt": "hi", "samplers": "top_k;infill"}`, "samplers", 400},
		{"samplers shape", "/v1/completions", `{"prompt": "hi", "samplers": 5}`, "samplers", 400},
		{"logit_bias id", "/v1/completions", `{"prompt": "hi", "logit_bias": {"99999999": 1}}`, "logit_bias", 400},
		{"max_tokens 0", "/v1/completions", `{"prompt": "hi", "max_tokens": 0}`, "max_tokens", 400},
		{"two prompts", "/v1/completions", `{"prompt": ["a", "b"]}`, "prompt", 400},
		{"image part", "/v1/chat/completions", `{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}`, "messages[0].content", 400},
		{"sampler and temperature", "/v1/completions", `{"prompt": "hi", "temperature": 0.5, "realizar": {"sampler": {"plugin": "greedy"}}}`, "realizar.sampler", 400},
		{"processor as sampler", "/v1/completions", `{"prompt": "hi", "realizar": {"sampler": {"plugin": "strings-missing"}}}`, "", 404},
		{"unknown model", "/v1/completions", `{"prompt": "hi", "model": "gpt-4"}`, "", 404},
		{"not json", "/v1/completions", `{"prompt": `, "", 400},
		{"wrong JSON type", "/v1/completions", `{"prompt": "hi", "logprobs": true}`, "logprobs", 400},
		{"wrong nested type", "/v1/chat/completions", `{"messages": [{"role": 1, "content": "hi"}]}`, "messages[*].role", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := s.do(t, "POST", tc.path, keyA, []byte(tc.body))
			require.Equal(t, tc.want, code, string(b))
			e := errorOf(t, b)
			assert.Equal(t, tc.param, e.Param)
			assert.NotEmpty(t, e.Message)
		})
	}
	// A value out of range is named with the value.
	code, b := s.do(t, "POST", "/v1/completions", keyA, []byte(`{"prompt": "hi", "temperature": -1.5}`))
	require.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "temperature must be >= 0, not -1.5", errorOf(t, b).Message)
}

func TestTokenize(t *testing.T) {
	s := startServer(t, nil, 8)
	code, b := s.do(t, "POST", "/tokenize", "", []byte(`{"content": "Hello world", "add_special": true}`))
	require.Equal(t, http.StatusOK, code, string(b))
	ids := s.model.Tokenizer.Encode("Hello world", tokenizerOpts(true))
	assert.JSONEq(t, `{"tokens": `+jsonOf(t, ids)+`}`, string(b))
	code, b = s.do(t, "POST", "/detokenize", "", []byte(`{"tokens": `+jsonOf(t, ids[1:])+`}`))
	require.Equal(t, http.StatusOK, code, string(b))
	assert.JSONEq(t, `{"content": "Hello world"}`, string(b))
	code, _ = s.do(t, "POST", "/detokenize", "", []byte(`{"tokens": [-1]}`))
	assert.Equal(t, http.StatusBadRequest, code)
}

// TestInternalErrorIsGeneric: an error that is not the client's (here the
// store cannot read an upload: its file became a directory) is a 500 whose
// message gives only the request id, never the error (which names the
// store's path); the id is the response's X-Request-Id and the log line's.
func TestInternalErrorIsGeneric(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	greedy, err := plugins.Builtin(plugins.GreedyBuiltin)
	require.NoError(t, err)
	sum := s.upload(t, keyA, greedy)
	files, err := filepath.Glob(filepath.Join(s.srv.store.(*tenancy.DirStore).Dir(), "*", sum+".wasm"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.NoError(t, os.Remove(files[0]))
	require.NoError(t, os.Mkdir(files[0], 0o700))

	req, err := http.NewRequest("POST", s.URL+"/v1/completions", strings.NewReader(
		`{"prompt": "hi", "max_tokens": 2, "realizar": {"sampler": {"plugin": "`+sum+`"}}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyA)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, string(b))
	id := resp.Header.Get("X-Request-Id")
	require.Len(t, id, 16)
	e := errorOf(t, b)
	assert.Equal(t, typeServer, e.Type)
	assert.Equal(t, codeInternal, e.Code)
	assert.Equal(t, "internal server error (request "+id+")", e.Message)
	assert.NotContains(t, string(b), files[0])
	assert.NotContains(t, string(b), "directory")
}
