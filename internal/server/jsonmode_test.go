package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonRuns are the seeds and temperatures the JSON-mode tests sample at.
var jsonRuns = []struct {
	seed int64
	temp float64
}{{1, 0}, {2, 0.7}, {3, 1}, {4, 1.3}, {5, 1.8}}

// chatJSON asks the fixture model for a chat completion, with JSON mode
// when jsonMode is set, and returns the content and the response.
func chatJSON(t *testing.T, c openai.Client, jsonMode bool, seed int64, temp float64, maxTokens int64) (string, *openai.ChatCompletion) {
	t.Helper()
	params := openai.ChatCompletionNewParams{Model: "serve-fixture",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Describe a cat as JSON.")},
		MaxTokens: openai.Int(maxTokens), Seed: openai.Int(seed), Temperature: openai.Float(temp)}
	if jsonMode {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	r, err := c.Chat.Completions.New(context.Background(), params, topK)
	require.NoError(t, err)
	require.Len(t, r.Choices, 1)
	return r.Choices[0].Message.Content, r
}

// TestE2EJSONMode: with response_format json_object the random-weight
// fixture's answer is a JSON object, at every seed and temperature, ended
// by the end of generation, also at max_tokens (the budget closes it and
// keeps its last token for the end of generation: finish_reason "stop");
// the json processor runs before the sampler.
func TestE2EJSONMode(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	c := client(s, keyA)
	for _, run := range jsonRuns {
		for _, maxTokens := range []int64{8, 60} {
			t.Run(fmt.Sprintf("seed=%d/temperature=%v/max_tokens=%d", run.seed, run.temp, maxTokens), func(t *testing.T) {
				content, r := chatJSON(t, c, true, run.seed, run.temp, maxTokens)
				var obj map[string]any
				require.NoError(t, json.Unmarshal([]byte(content), &obj), "%q", content)
				assert.LessOrEqual(t, r.Usage.CompletionTokens, maxTokens)
				// the budget's last token is kept for end of generation:
				// a closed value is a "stop", which clients parse
				assert.Equal(t, "stop", r.Choices[0].FinishReason, "%q", content)
				ext := extension(t, r.JSON.ExtraFields["realizar"].Raw())
				require.Len(t, ext.Policies, 2)
				assert.Contains(t, ext.Policies[0], "json")
				assert.Contains(t, ext.Policies[1], "standard")
			})
		}
	}
}

// TestE2EJSONModeOff is the control: the same requests without
// response_format give no JSON object at all (random weights), so the
// test above would fail without the processor.
func TestE2EJSONModeOff(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	c := client(s, keyA)
	for _, run := range jsonRuns {
		content, _ := chatJSON(t, c, false, run.seed, run.temp, 60)
		var obj map[string]any
		assert.Error(t, json.Unmarshal([]byte(content), &obj), "seed %d: %q", run.seed, content)
	}
}

// TestE2EJSONModeStream: streamed chunks of a JSON-mode answer join into
// the same object as without stream.
func TestE2EJSONModeStream(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	c := client(s, keyA)
	whole, _ := chatJSON(t, c, true, 7, 1, 40)
	params := openai.ChatCompletionNewParams{Model: "serve-fixture",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Describe a cat as JSON.")},
		MaxTokens: openai.Int(40), Seed: openai.Int(7), Temperature: openai.Float(1),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}}
	stream := c.Chat.Completions.NewStreaming(context.Background(), params, topK)
	var b strings.Builder
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			b.WriteString(ch.Delta.Content)
		}
	}
	require.NoError(t, stream.Err())
	assert.Equal(t, whole, b.String())
	assert.True(t, json.Valid([]byte(b.String())), "%q", b.String())
}

// TestResponseFormat: text is a no-op, json_object also works on
// /v1/completions, json_schema and unknown types are 400s.
func TestResponseFormat(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	tests := []struct {
		name, path, format string
		status             int
		code               string
	}{
		{"text", "/v1/chat/completions", `{"type":"text"}`, http.StatusOK, ""},
		{"null", "/v1/chat/completions", `null`, http.StatusOK, ""},
		{"json_object on completions", "/v1/completions", `{"type":"json_object"}`, http.StatusOK, ""},
		{"json_schema", "/v1/chat/completions", `{"type":"json_schema","json_schema":{"name":"x","schema":{"enum":["a","b"]}}}`, http.StatusOK, ""},
		{"json_schema refused", "/v1/chat/completions", `{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"array","uniqueItems":true}}}`,
			http.StatusBadRequest, "unsupported_schema"},
		{"json_schema without schema", "/v1/chat/completions", `{"type":"json_schema","json_schema":{"name":"x"}}`, http.StatusBadRequest, ""},
		{"unknown type", "/v1/chat/completions", `{"type":"yaml"}`, http.StatusBadRequest, ""},
		{"not an object", "/v1/chat/completions", `"json"`, http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":12,"seed":3,"top_k":40,"response_format":` + tt.format + `}`
			if tt.path == "/v1/completions" {
				body = `{"prompt":"Once upon a time","max_tokens":12,"seed":3,"top_k":40,"response_format":` + tt.format + `}`
			}
			code, resp := s.do(t, "POST", tt.path, keyA, []byte(body))
			require.Equal(t, tt.status, code, string(resp))
			if code != http.StatusOK {
				e := errorOf(t, resp)
				assert.Equal(t, "response_format", e.Param)
				if tt.code != "" {
					assert.Equal(t, tt.code, e.Code)
				}
				return
			}
			if tt.path == "/v1/completions" {
				var r completionResponse
				require.NoError(t, json.Unmarshal(resp, &r))
				assert.True(t, json.Valid([]byte(r.Choices[0].Text)), "%q", r.Choices[0].Text)
			}
		})
	}
}
