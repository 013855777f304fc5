package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPredictedOutputs: through the OpenAI SDK, a chat turn with a
// prediction (OpenAI's Predicted Outputs: the exact answer, an edited
// one, text parts), or with realizar.speculative lookup, gives the plain
// turn's text, logprobs and finish reason, while plain turns run beside
// it in the same passes; usage reports the prediction's accepted and
// rejected tokens, realizar.drafts the drafts, /metrics the counters.
func TestPredictedOutputs(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	c := client(s, keyA)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "serve-fixture",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
		MaxTokens: openai.Int(40), Seed: openai.Int(3), Temperature: openai.Float(0.9),
		Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2)}
	plain, err := c.Chat.Completions.New(ctx, params, topK, noCache)
	require.NoError(t, err)
	answer := plain.Choices[0].Message.Content
	require.NotEmpty(t, answer)
	assert.Zero(t, plain.Usage.CompletionTokensDetails.AcceptedPredictionTokens)
	assert.Nil(t, extension(t, plain.JSON.ExtraFields["realizar"].Raw()).Drafts)

	words := strings.Fields(answer)
	for i := 1; i < len(words); i += 3 {
		words[i] = "edited"
	}
	edited := strings.Join(words, " ")
	predict := func(text string) openai.ChatCompletionPredictionContentParam {
		return openai.ChatCompletionPredictionContentParam{Content: openai.ChatCompletionPredictionContentContentUnionParam{OfString: openai.String(text)}}
	}
	tests := []struct {
		name     string
		params   func(p *openai.ChatCompletionNewParams)
		opts     []option.RequestOption
		accepted bool // the prediction's tokens are reported
		// mustDraft: the turn's drafts reach the passes. The first
		// speculative turn comes before the draft gate has measured
		// enough drafts to close, so it always drafts; a later one beside
		// two plain turns may be gated (serving/draftgate.go: on this model
		// a pass costs per row), which keeps its text and its accounting
		// but may take none of its drafts.
		mustDraft bool
	}{
		{"exact prediction", func(p *openai.ChatCompletionNewParams) { p.Prediction = predict(answer) }, nil, true, true},
		{"edited prediction", func(p *openai.ChatCompletionNewParams) { p.Prediction = predict(edited) }, nil, true, false},
		{"prediction in text parts", func(p *openai.ChatCompletionNewParams) {
			half := len(answer) / 2
			p.Prediction = openai.ChatCompletionPredictionContentParam{Content: openai.ChatCompletionPredictionContentContentUnionParam{
				OfArrayOfContentParts: []openai.ChatCompletionContentPartTextParam{{Text: answer[:half]}, {Text: answer[half:]}}}}
		}, nil, true, false},
		{"lookup", func(*openai.ChatCompletionNewParams) {}, []option.RequestOption{option.WithJSONSet("realizar", map[string]any{"speculative": map[string]any{"lookup": true, "draft_max": 4}})}, false, false},
	}
	var wg sync.WaitGroup
	for _, tt := range tests {
		// Plain turns beside each speculative one, in the same passes.
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.Chat.Completions.New(ctx, params, topK, noCache)
				if assert.NoError(t, err) {
					assert.Equal(t, answer, r.Choices[0].Message.Content)
				}
			}()
		}
		t.Run(tt.name, func(t *testing.T) {
			p := params
			tt.params(&p)
			r, err := c.Chat.Completions.New(ctx, p, append([]option.RequestOption{topK, noCache}, tt.opts...)...)
			require.NoError(t, err)
			assert.Equal(t, answer, r.Choices[0].Message.Content)
			assert.Equal(t, plain.Choices[0].FinishReason, r.Choices[0].FinishReason)
			assert.Equal(t, plain.Choices[0].Logprobs.Content, r.Choices[0].Logprobs.Content)
			assert.Equal(t, plain.Usage.CompletionTokens, r.Usage.CompletionTokens)
			ext := extension(t, r.JSON.ExtraFields["realizar"].Raw())
			det := r.Usage.CompletionTokensDetails
			if tt.accepted {
				require.NotNil(t, ext.Drafts)
				if tt.mustDraft {
					assert.Positive(t, det.AcceptedPredictionTokens)
				}
				assert.Equal(t, int64(ext.Drafts.Accepted), det.AcceptedPredictionTokens)
				assert.Equal(t, int64(ext.Drafts.Drafted-ext.Drafts.Accepted), det.RejectedPredictionTokens)
			} else {
				assert.Zero(t, det.AcceptedPredictionTokens, "lookup drafts are not a prediction's")
			}
		})
	}
	wg.Wait()

	t.Run("streamed, with usage", func(t *testing.T) {
		p := params
		p.Prediction = predict(answer)
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := c.Chat.Completions.NewStreaming(ctx, p, topK)
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		require.NoError(t, stream.Err())
		assert.Equal(t, answer, acc.Choices[0].Message.Content)
		assert.Positive(t, acc.Usage.CompletionTokensDetails.AcceptedPredictionTokens)
	})
	t.Run("completions", func(t *testing.T) {
		body := func(extra string) []byte {
			return fmt.Appendf(nil, `{"prompt":"Once upon a time","max_tokens":30,"temperature":0,"top_k":40,"cache_prompt":false%s}`, extra)
		}
		code, out := s.do(t, "POST", "/v1/completions", keyA, body(""))
		require.Equal(t, http.StatusOK, code, string(out))
		var want completionResponse
		require.NoError(t, json.Unmarshal(out, &want))
		pred, err := json.Marshal(want.Choices[0].Text)
		require.NoError(t, err)
		code, out = s.do(t, "POST", "/v1/completions", keyA, body(`,"prediction":{"type":"content","content":`+string(pred)+`}`))
		require.Equal(t, http.StatusOK, code, string(out))
		var got completionResponse
		require.NoError(t, json.Unmarshal(out, &got))
		assert.Equal(t, want.Choices[0].Text, got.Choices[0].Text)
		require.NotNil(t, got.Usage.CompletionTokensDetails)
		assert.Positive(t, got.Usage.CompletionTokensDetails.AcceptedPredictionTokens)
	})
	t.Run("metrics", func(t *testing.T) {
		rec := httptest.NewRecorder()
		s.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		m := rec.Body.String()
		assert.Contains(t, m, `realizar_draft_tokens_total{tenant="a"}`)
		assert.Contains(t, m, `realizar_draft_accepted_tokens_total{tenant="a"}`)
		assert.Contains(t, m, `realizar_verify_pass_rows_count`)
	})
}

// TestSpeculativeRefusals: a malformed prediction or realizar.speculative
// is a 400 naming the field.
func TestSpeculativeRefusals(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	tests := []struct {
		name, extra, param string
	}{
		{"prediction of another type", `"prediction":{"type":"file","content":"x"}`, "prediction"},
		{"prediction without content", `"prediction":{"type":"content"}`, "prediction"},
		{"prediction of an image part", `"prediction":{"type":"content","content":[{"type":"image_url","image_url":{"url":"x"}}]}`, "prediction"},
		{"prediction a string", `"prediction":"x"`, "prediction"},
		{"draft_max 0", `"realizar":{"speculative":{"draft_max":0}}`, "realizar.speculative.draft_max"},
		{"draft_max past draft.MaxDraft", fmt.Sprintf(`"realizar":{"speculative":{"draft_max":%d}}`, draft.MaxDraft+1), "realizar.speculative.draft_max"},
		{"two sources", `"prediction":{"type":"content","content":"x"},"realizar":{"speculative":{"lookup":true}}`, "realizar.speculative.lookup"},
		{"lookup a string", `"realizar":{"speculative":{"lookup":"yes"}}`, "realizar.speculative.lookup"},
		{"draft_max a string", `"realizar":{"speculative":{"draft_max":"4"}}`, "realizar.speculative.draft_max"},
		{"unknown key", `"realizar":{"speculative":{"ngram":true}}`, "realizar.speculative.ngram"},
		{"draft_model without one", `"realizar":{"speculative":{"draft_model":true}}`, "realizar.speculative.draft_model"},
		{"draft_model a string", `"realizar":{"speculative":{"draft_model":"yes"}}`, "realizar.speculative.draft_model"},
		{"not an object", `"realizar":{"speculative":true}`, "realizar.speculative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := s.do(t, "POST", "/v1/chat/completions", keyA,
				[]byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,`+tt.extra+`}`))
			require.Equal(t, http.StatusBadRequest, code, string(out))
			assert.Equal(t, tt.param, errorOf(t, out).Param, string(out))
		})
	}
}

// TestSpeculativeTenantsIsolated: one tenant's text never reaches another
// tenant's drafts. Tenant b's prompt holds no repetition, so lookup over
// b's own sequence drafts only from b's own output; tenant a's prompt is
// b's prompt followed by b's whole answer, so a lookup table shared with
// a (across requests, or across the sequences of a pass) would draft b's
// answer from b's first token on. b's drafts, with a's turns before and
// beside it, are those b gets on a server a never used (checked: a
// drafter that kept its history across requests fails it, b then
// drafting some 40 tokens where alone it drafts none).
func TestSpeculativeTenantsIsolated(t *testing.T) {
	const bPrompt = "Once upon a time there was a little dog named Max"
	turn := func(s *testServer, key, prompt string) completionResponse {
		body, err := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": 48, "temperature": 0, "cache_prompt": false,
			"realizar": map[string]any{"speculative": map[string]any{"lookup": true}}})
		require.NoError(t, err)
		code, out := s.do(t, "POST", "/v1/completions", key, body)
		require.Equal(t, http.StatusOK, code, string(out))
		var r completionResponse
		require.NoError(t, json.Unmarshal(out, &r))
		return r
	}
	drafted := func(r completionResponse) draftsResponse {
		if r.Realizar.Drafts == nil {
			return draftsResponse{}
		}
		return *r.Realizar.Drafts
	}
	alone := turn(startServer(t, testTenantsFile(), 64), keyB, bPrompt)
	aPrompt := bPrompt + alone.Choices[0].Text + " " + bPrompt

	s := startServer(t, testTenantsFile(), 64)
	a := turn(s, keyA, aPrompt)
	require.Positive(t, drafted(a).Accepted, "a's own prompt repeats: its lookup drafts b's answer")
	after := turn(s, keyB, bPrompt)
	assert.Equal(t, alone.Choices[0].Text, after.Choices[0].Text)
	assert.Equal(t, drafted(alone), drafted(after), "b after a: b's drafts are b's own")

	var wg sync.WaitGroup
	var beside [3]completionResponse
	for i := range beside {
		wg.Add(2)
		go func() { defer wg.Done(); turn(s, keyA, aPrompt) }()
		go func() { defer wg.Done(); beside[i] = turn(s, keyB, bPrompt) }()
	}
	wg.Wait()
	for _, r := range beside {
		assert.Equal(t, alone.Choices[0].Text, r.Choices[0].Text)
		assert.Equal(t, drafted(alone), drafted(r), "b beside a: b's drafts are b's own")
	}
}
