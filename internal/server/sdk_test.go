package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

// sdkDir is where scripts/sdk-install.sh installs the npm clients
// (server/testdata/sdk/package-lock.json), as `make test-deps` runs it.
func sdkDir(t *testing.T) string { return testenv.SDKDir(t) }

// runSDKScript runs testdata/sdk/<script> with node against s, its key
// and the extra environment, and returns its output.
func runSDKScript(t *testing.T, s *testServer, script, key string, env ...string) string {
	dir := sdkDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "sdk", script))
	cmd.Env = append(os.Environ(), append([]string{"BASE_URL=" + s.URL, "API_KEY=" + key, "MODEL=" + s.model.ID,
		"SDK_DIR=" + dir, "TOOL_SCHEMA=" + toolSchema}, env...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

// TestAnthropicSDK: the official Anthropic SDK (npm @anthropic-ai/sdk,
// pinned) against /v1/messages, on a Hermes-template model: create,
// stream, a tool round trip with tool_choice any, count_tokens, a 400 as
// the SDK's BadRequestError (testdata/sdk/anthropic.mjs).
func TestAnthropicSDK(t *testing.T) {
	r := testSandbox(t)
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, readHFTemplate(t, "Qwen-Qwen2.5-7B-Instruct.jinja"), r))
	out := runSDKScript(t, s, "anthropic.mjs", keyA)
	for _, step := range []string{"create", "stream", "tools", "count_tokens", "error"} {
		require.True(t, strings.Contains(out, step+" ok"), out)
	}
}

// TestOpenAIResponsesSDK: the official OpenAI SDK (npm openai, pinned)
// against /v1/responses, on a Hermes-template model: responses.create,
// responses.stream, retrieve and delete, a function-call round trip via
// previous_response_id and the answer's input items
// (responses.inputItems.list, paged), json_schema structured output, a
// 400 as its BadRequestError (testdata/sdk/responses.mjs).
func TestOpenAIResponsesSDK(t *testing.T) {
	r := testSandbox(t)
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, readHFTemplate(t, "Qwen-Qwen2.5-7B-Instruct.jinja"), r))
	out := runSDKScript(t, s, "responses.mjs", keyA)
	for _, step := range []string{"create", "stream", "store", "function call", "input items", "json_schema", "error"} {
		require.True(t, strings.Contains(out, step+" ok"), out)
	}
}

// TestVercelAISDK: the Vercel AI SDK's Anthropic provider (npm ai and
// @ai-sdk/anthropic, pinned) against /v1/messages: generateText,
// streamText and a tool call (testdata/sdk/aisdk.mjs).
func TestVercelAISDK(t *testing.T) {
	r := testSandbox(t)
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, readHFTemplate(t, "Qwen-Qwen2.5-7B-Instruct.jinja"), r))
	out := runSDKScript(t, s, "aisdk.mjs", keyA)
	for _, step := range []string{"generateText", "streamText", "tools"} {
		require.True(t, strings.Contains(out, step+" ok"), out)
	}
}

// TestOpenAIEmbeddingsSDK: the official OpenAI SDK (npm openai, pinned)
// against /v1/embeddings: embeddings.create with its default base64
// encoding and with float, one input and a batch, every value equal to
// the Embedder's; dimensions other than the model's as its
// BadRequestError (testdata/sdk/embeddings.mjs).
func TestOpenAIEmbeddingsSDK(t *testing.T) {
	s, e := startEmbeddingServer(t, testTenantsFile())
	texts := []string{"Once upon a time", "Hello there, little bird", "A"}
	want := make([][]float32, len(texts))
	for i, text := range texts {
		v, err := e.Embed(s.model.Tokenizer.Encode(text, tokenizerOpts(true)))
		require.NoError(t, err)
		want[i] = v
	}
	out := runSDKScript(t, s, "embeddings.mjs", keyA, "TEXTS="+jsonOf(t, texts), "EXPECTED="+jsonOf(t, want))
	for _, step := range []string{"create", "batch", "error"} {
		require.True(t, strings.Contains(out, step+" ok"), out)
	}
}
