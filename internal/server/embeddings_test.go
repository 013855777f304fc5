package server

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/embedding"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/model"
)

// startEmbeddingServer is a server whose model embeds with mean pooling;
// it returns the Embedder too, to compute the expected vectors.
func startEmbeddingServer(t *testing.T, tenants []byte) (*testServer, *embedding.Embedder) {
	t.Helper()
	var e *embedding.Embedder
	s := startServerWith(t, tenants, Config{Queue: 8}, func(m *Model, mdl *model.Model) {
		var err error
		e, err = embedding.New(mdl, embedding.PoolingMean)
		require.NoError(t, err)
		m.Embedder = e
	})
	return s, e
}

type embeddingsReply struct {
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// floatsOf reads an embedding as sent: a JSON array, or base64 of
// little-endian float32s.
func floatsOf(t *testing.T, v any) []float32 {
	t.Helper()
	switch x := v.(type) {
	case []any:
		out := make([]float32, len(x))
		for i, f := range x {
			out[i] = float32(f.(float64))
		}
		return out
	case string:
		b, err := base64.StdEncoding.DecodeString(x)
		require.NoError(t, err)
		require.Zero(t, len(b)%4)
		out := make([]float32, len(b)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return out
	}
	t.Fatalf("embedding of type %T", v)
	return nil
}

// TestEmbeddings: every input form and encoding_format gives, for each
// input in order, exactly the Embedder's vector of the input's tokens
// (texts with BOS), with usage counting every token.
func TestEmbeddings(t *testing.T) {
	s, e := startEmbeddingServer(t, nil)
	tok := s.model.Tokenizer
	hello := tok.Encode("Hello there", tokenizerOpts(true))
	story := tok.Encode("Once upon a time", tokenizerOpts(true))
	embed := func(ids []int32) []float32 {
		v, err := e.Embed(ids)
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		name, body string
		want       [][]int32
	}{
		{"string", `{"input": "Hello there"}`, [][]int32{hello}},
		{"strings", `{"input": ["Hello there", "Once upon a time"], "model": "serve-fixture"}`, [][]int32{hello, story}},
		{"tokens", `{"input": [1, 5, 9]}`, [][]int32{{1, 5, 9}}},
		{"token arrays", `{"input": [[1, 5, 9], [2]], "encoding_format": "float"}`, [][]int32{{1, 5, 9}, {2}}},
		{"base64", `{"input": ["Hello there", "Once upon a time"], "encoding_format": "base64"}`, [][]int32{hello, story}},
		{"dimensions equal", fmt.Sprintf(`{"input": "Hello there", "dimensions": %d}`, e.Dims()), [][]int32{hello}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := s.do(t, "POST", "/v1/embeddings", "", []byte(tc.body))
			require.Equal(t, http.StatusOK, code, string(b))
			var r embeddingsReply
			require.NoError(t, jsonUnmarshal(b, &r))
			assert.Equal(t, "list", r.Object)
			assert.Equal(t, "serve-fixture", r.Model)
			require.Len(t, r.Data, len(tc.want))
			tokens := 0
			for i, ids := range tc.want {
				assert.Equal(t, "embedding", r.Data[i].Object)
				assert.Equal(t, i, r.Data[i].Index)
				got := floatsOf(t, r.Data[i].Embedding)
				assert.Equal(t, embed(ids), got, "input %d", i)
				if strings.Contains(tc.body, "base64") {
					assert.IsType(t, "", r.Data[i].Embedding)
				}
				tokens += len(ids)
			}
			assert.Equal(t, tokens, r.Usage.PromptTokens)
			assert.Equal(t, tokens, r.Usage.TotalTokens)
		})
	}
}

// TestEmbeddingsRefused: each malformed or unsupported request is a 400
// (404 for another model) naming its field, before any input is embedded.
func TestEmbeddingsRefused(t *testing.T) {
	s, e := startEmbeddingServer(t, nil)
	ctx := s.model.Forward.ContextLength()
	long := make([]string, ctx+1)
	for i := range long {
		long[i] = "1"
	}
	many := strings.Repeat(`"a",`, maxEmbeddingInputs) + `"a"`
	for _, tc := range []struct {
		name, body, param, code string
		status                  int
	}{
		{"no input", `{}`, "input", "invalid_value", 400},
		{"null input", `{"input": null}`, "input", "invalid_value", 400},
		{"empty string", `{"input": ""}`, "input", "invalid_value", 400},
		{"empty string in array", `{"input": ["a", ""]}`, "input[1]", "invalid_value", 400},
		{"empty array", `{"input": []}`, "input", "invalid_value", 400},
		{"empty token array", `{"input": [[1], []]}`, "input[1]", "invalid_value", 400},
		{"object", `{"input": {"text": "a"}}`, "input", "invalid_value", 400},
		{"mixed", `{"input": ["a", [1, 2]]}`, "input", "invalid_value", 400},
		{"fraction", `{"input": [1.5]}`, "input[0]", "invalid_value", 400},
		{"token out of vocabulary", `{"input": [1, 1000000]}`, "input", "invalid_value", 400},
		{"negative token", `{"input": [[-1]]}`, "input", "invalid_value", 400},
		{"too many inputs", `{"input": [` + many + `]}`, "input", "invalid_value", 400},
		{"past the context", `{"input": [` + strings.Join(long, ",") + `]}`, "input", "context_length_exceeded", 400},
		{"encoding_format", `{"input": "a", "encoding_format": "int8"}`, "encoding_format", "invalid_value", 400},
		{"dimensions", fmt.Sprintf(`{"input": "a", "dimensions": %d}`, e.Dims()-1), "dimensions", "invalid_value", 400},
		{"model", `{"input": "a", "model": "other"}`, "", "model_not_found", 404},
		{"not JSON", `{"input": `, "", "", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := s.do(t, "POST", "/v1/embeddings", "", []byte(tc.body))
			require.Equal(t, tc.status, code, string(b))
			ae := errorOf(t, b)
			if tc.param != "" {
				assert.Equal(t, tc.param, ae.Param, ae.Message)
			}
			if tc.code != "" {
				assert.Equal(t, tc.code, ae.Code, ae.Message)
			}
		})
	}
}

// TestEmbeddingsUnsupported: a model without an Embedder (no pooling
// type) answers 400 embeddings_unsupported.
func TestEmbeddingsUnsupported(t *testing.T) {
	s := startServer(t, nil, 8)
	code, b := s.do(t, "POST", "/v1/embeddings", "", []byte(`{"input": "a"}`))
	require.Equal(t, http.StatusBadRequest, code, string(b))
	assert.Equal(t, "embeddings_unsupported", errorOf(t, b).Code)
}

// TestEmbeddingsLimits: embeddings count against the tenant's rate and
// are authenticated like every endpoint, and they show in the metrics by
// tenant (requests by outcome, tokens embedded).
func TestEmbeddingsLimits(t *testing.T) {
	tenants := fmt.Appendf(nil, `{"tenants": [
	  {"name": "a", "key_sha256": [%q], "limits": {"requests_per_minute": 1}},
	  {"name": "b", "key_sha256": [%q]}]}`, tenancy.HashKey(keyA), tenancy.HashKey(keyB))
	s, _ := startEmbeddingServer(t, tenants)
	body := []byte(`{"input": [1, 2, 3, 4]}`)
	code, b := s.do(t, "POST", "/v1/embeddings", "", body)
	require.Equal(t, http.StatusUnauthorized, code, string(b))
	code, b = s.do(t, "POST", "/v1/embeddings", keyA, body)
	require.Equal(t, http.StatusOK, code, string(b))
	code, b = s.do(t, "POST", "/v1/embeddings", keyA, body)
	require.Equal(t, http.StatusTooManyRequests, code, string(b))
	code, b = s.do(t, "POST", "/v1/embeddings", keyB, body)
	require.Equal(t, http.StatusOK, code, string(b), "another tenant's rate is its own")

	metrics := httptest.NewServer(s.srv.MetricsHandler())
	t.Cleanup(metrics.Close)
	resp, err := http.Get(metrics.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	m, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, line := range []string{
		`realizar_requests_total{endpoint="embeddings",outcome="ok",tenant="a"} 1`,
		`realizar_requests_total{endpoint="embeddings",outcome="rate_limited",tenant="a"} 1`,
		`realizar_requests_total{endpoint="embeddings",outcome="ok",tenant="b"} 1`,
		`realizar_embedded_tokens_total{tenant="a"} 4`,
		`realizar_embedded_tokens_total{tenant="b"} 4`,
	} {
		assert.Contains(t, string(m), line)
	}
}

// FuzzEmbeddingInput: parseEmbeddingInput never panics, and what it
// accepts is 1 to maxEmbeddingInputs inputs, each a text or tokens, not
// texts beside tokens.
func FuzzEmbeddingInput(f *testing.F) {
	for _, s := range []string{`"a"`, `["a","b"]`, `[1,2]`, `[[1],[2,3]]`, `[]`, `[[]]`, `["a",[1]]`, `null`, `[1.5]`, `[2147483648]`, `{"a":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		in, err := parseEmbeddingInput([]byte(raw))
		if err != nil {
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, http.StatusBadRequest, ae.Status)
			return
		}
		require.NotEmpty(t, in)
		require.LessOrEqual(t, len(in), maxEmbeddingInputs)
		texts := 0
		for _, x := range in {
			require.True(t, (x.text != nil) != (x.tokens != nil), "one of text and tokens")
			if x.text != nil {
				texts++
			}
		}
		require.True(t, texts == 0 || texts == len(in), "texts beside tokens")
	})
}
