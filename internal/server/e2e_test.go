package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func client(s *testServer, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// topK keeps the standard sampler's steps short on the 32,000-token
// vocabulary (about 0.1 ms a step against ~1 ms with OpenAI's defaults, no
// top-k and top_p 1, which walk the whole vocabulary).
var topK = option.WithJSONSet("top_k", 40)

// noCache turns the prompt cache off: a reused prefix's last token runs
// again as a one-token step, whose logits differ in the last bits from
// the prompt pass's, so turns compared for their logprobs start cold.
var noCache = option.WithJSONSet("cache_prompt", false)

// stopIn returns a stop string from the middle of text (two runes from the
// second), and the text before its first occurrence.
func stopIn(t *testing.T, text string) (stop, before string) {
	r := []rune(text)
	require.Greater(t, len(r), 4, "fixture text too short: %q", text)
	stop = string(r[1:3])
	return stop, text[:strings.Index(text, stop)]
}

// extension decodes a response's realizar field.
func extension(t *testing.T, raw string) realizarResponse {
	var r realizarResponse
	require.NoError(t, json.Unmarshal([]byte(raw), &r), raw)
	return r
}

func TestE2ECompletions(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	c := client(s, keyA)
	ctx := context.Background()

	models, err := c.Models.List(ctx)
	require.NoError(t, err)
	require.Len(t, models.Data, 1)
	assert.Equal(t, "serve-fixture", models.Data[0].ID)

	params := openai.CompletionNewParams{Model: openai.CompletionNewParamsModel("serve-fixture"),
		Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
		MaxTokens: openai.Int(12), Seed: openai.Int(42), Temperature: openai.Float(0.9)}
	first, err := c.Completions.New(ctx, params, topK)
	require.NoError(t, err)
	require.Len(t, first.Choices, 1)
	assert.Equal(t, "length", string(first.Choices[0].FinishReason))
	assert.Equal(t, int64(12), first.Usage.CompletionTokens)
	ext := extension(t, first.JSON.ExtraFields["realizar"].Raw())
	assert.Equal(t, int64(42), ext.Seed)

	t.Run("seed determinism", func(t *testing.T) {
		again, err := c.Completions.New(ctx, params, topK)
		require.NoError(t, err)
		assert.Equal(t, first.Choices[0].Text, again.Choices[0].Text)
	})
	t.Run("random seed is returned and reproduces", func(t *testing.T) {
		p := params
		p.Seed = param.Opt[int64]{}
		r, err := c.Completions.New(ctx, p, topK)
		require.NoError(t, err)
		seed := extension(t, r.JSON.ExtraFields["realizar"].Raw()).Seed
		p.Seed = openai.Int(seed)
		again, err := c.Completions.New(ctx, p, topK)
		require.NoError(t, err)
		assert.Equal(t, r.Choices[0].Text, again.Choices[0].Text)
	})
	t.Run("streaming gives the same text", func(t *testing.T) {
		stream := c.Completions.NewStreaming(ctx, params, topK)
		var text strings.Builder
		var finish string
		var usage int64
		for stream.Next() {
			ch := stream.Current()
			if len(ch.Choices) > 0 {
				text.WriteString(ch.Choices[0].Text)
				if ch.Choices[0].FinishReason != "" {
					finish = string(ch.Choices[0].FinishReason)
				}
			}
			if ch.Usage.TotalTokens > 0 {
				usage = ch.Usage.CompletionTokens
			}
		}
		require.NoError(t, stream.Err())
		assert.Equal(t, first.Choices[0].Text, text.String())
		assert.Equal(t, "length", finish)
		assert.Equal(t, int64(12), usage)
	})
	t.Run("stop strings are trimmed and never streamed", func(t *testing.T) {
		// Stop at a string taken from the middle of the known text.
		stop, want := stopIn(t, first.Choices[0].Text)
		p := params
		p.Stop = openai.CompletionNewParamsStopUnion{OfStringArray: []string{stop, "never in the text"}}
		r, err := c.Completions.New(ctx, p, topK)
		require.NoError(t, err)
		assert.Equal(t, want, r.Choices[0].Text)
		assert.Equal(t, "stop", string(r.Choices[0].FinishReason))

		stream := c.Completions.NewStreaming(ctx, p, topK)
		var text strings.Builder
		for stream.Next() {
			if ch := stream.Current(); len(ch.Choices) > 0 {
				text.WriteString(ch.Choices[0].Text)
			}
		}
		require.NoError(t, stream.Err())
		assert.Equal(t, want, text.String())
	})
}

func TestE2EChat(t *testing.T) {
	// OpenAI's defaults throughout: temperature 1, top_p 1, no top-k.
	s := startServer(t, testTenantsFile(), 64)
	c := client(s, keyB)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "serve-fixture",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Tell me a story.")},
		MaxTokens: openai.Int(10), Seed: openai.Int(7)}
	r, err := c.Chat.Completions.New(ctx, params)
	require.NoError(t, err)
	require.Len(t, r.Choices, 1)
	assert.Equal(t, "assistant", string(r.Choices[0].Message.Role))
	assert.Equal(t, "chat.completion", string(r.Object))

	stream := c.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	require.NoError(t, stream.Err())
	require.Len(t, acc.Choices, 1)
	assert.Equal(t, r.Choices[0].Message.Content, acc.Choices[0].Message.Content)
	assert.Equal(t, r.Choices[0].FinishReason, acc.Choices[0].FinishReason)
	assert.Equal(t, r.Usage.CompletionTokens, acc.Usage.CompletionTokens)

	t.Run("logprobs", func(t *testing.T) {
		p := params
		p.Logprobs = openai.Bool(true)
		p.TopLogprobs = openai.Int(3)
		r, err := c.Chat.Completions.New(ctx, p)
		require.NoError(t, err)
		lp := r.Choices[0].Logprobs.Content
		require.NotEmpty(t, lp)
		for _, e := range lp {
			assert.LessOrEqual(t, e.Logprob, 0.0)
			assert.Len(t, e.TopLogprobs, 3)
		}
	})
}

// TestE2EExtension uploads greedy.wasm and selects it through the realizar
// field: the text must equal the built-in greedy's.
func TestE2EExtension(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	sum := s.upload(t, keyA, testdataWasm(t, "greedy.wasm"))
	c := client(s, keyA)
	ctx := context.Background()
	params := openai.CompletionNewParams{Model: "serve-fixture",
		Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("The cat")},
		MaxTokens: openai.Int(10)}
	withSampler := func(name string) option.RequestOption {
		return option.WithJSONSet("realizar", map[string]any{"sampler": map[string]any{"plugin": name}})
	}
	uploaded, err := c.Completions.New(ctx, params, withSampler(sum))
	require.NoError(t, err)
	builtin, err := c.Completions.New(ctx, params, withSampler("greedy"))
	require.NoError(t, err)
	assert.Equal(t, builtin.Choices[0].Text, uploaded.Choices[0].Text)
	ext := extension(t, uploaded.JSON.ExtraFields["realizar"].Raw())
	require.NotEmpty(t, ext.Policies)
	assert.Contains(t, ext.Policies[len(ext.Policies)-1], sum[:12])

	t.Run("uploaded stop policy", func(t *testing.T) {
		stopSum := s.upload(t, keyA, testdataWasm(t, "stopstr.wasm"))
		stop, want := stopIn(t, builtin.Choices[0].Text)
		r, err := c.Completions.New(ctx, params, option.WithJSONSet("realizar", map[string]any{
			"sampler": map[string]any{"plugin": "greedy"},
			"stop":    map[string]any{"plugin": stopSum, "config": map[string]any{"stop": stop}},
		}))
		require.NoError(t, err)
		assert.Equal(t, want, r.Choices[0].Text)
		assert.Equal(t, "stop", string(r.Choices[0].FinishReason))
	})
}

// TestE2EStreamLogprobs: a streamed turn reports the same per-token
// logprobs as the same turn without stream, split across its chunks, also
// when a stop string trims text (those tokens' logprobs come in a last
// chunk).
func TestE2EStreamLogprobs(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	c := client(s, keyA)
	ctx := context.Background()

	params := openai.CompletionNewParams{Model: "serve-fixture",
		Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
		MaxTokens: openai.Int(12), Seed: openai.Int(42), Logprobs: openai.Int(2)}
	plain, err := c.Completions.New(ctx, params, topK)
	require.NoError(t, err)
	stop, _ := stopIn(t, plain.Choices[0].Text)
	withStop := params
	withStop.Stop = openai.CompletionNewParamsStopUnion{OfString: openai.String(stop)}
	// A stop string that starts where a token starts: all text before it
	// has been released, so the trimmed tokens' logprobs have no text chunk
	// to ride on and come in the last chunk.
	toks := plain.Choices[0].Logprobs.Tokens
	require.Greater(t, len(toks), 4)
	atToken := params
	atToken.Stop = openai.CompletionNewParamsStopUnion{OfString: openai.String(toks[3] + toks[4])}
	require.NotContains(t, strings.Join(toks[:3], ""), toks[3]+toks[4])

	for name, p := range map[string]openai.CompletionNewParams{"budget": params, "stop string": withStop,
		"stop string at a token": atToken} {
		t.Run("completions "+name, func(t *testing.T) {
			want, err := c.Completions.New(ctx, p, topK)
			require.NoError(t, err)
			stream := c.Completions.NewStreaming(ctx, p, topK)
			var tokens []string
			var lps []float64
			var offsets []int64
			var text strings.Builder
			for stream.Next() {
				ch := stream.Current()
				if len(ch.Choices) == 0 {
					continue
				}
				text.WriteString(ch.Choices[0].Text)
				lp := ch.Choices[0].Logprobs
				tokens = append(tokens, lp.Tokens...)
				lps = append(lps, lp.TokenLogprobs...)
				offsets = append(offsets, lp.TextOffset...)
			}
			require.NoError(t, stream.Err())
			assert.Equal(t, want.Choices[0].Text, text.String())
			w := want.Choices[0].Logprobs
			require.NotEmpty(t, w.Tokens)
			assert.Equal(t, w.Tokens, tokens)
			assert.Equal(t, w.TokenLogprobs, lps)
			assert.Equal(t, w.TextOffset, offsets)
		})
	}

	t.Run("chat", func(t *testing.T) {
		p := openai.ChatCompletionNewParams{Model: "serve-fixture",
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
			MaxTokens: openai.Int(10), Seed: openai.Int(7), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2)}
		want, err := c.Chat.Completions.New(ctx, p, topK)
		require.NoError(t, err)
		// Not from the first request's prompt cache: it would hold all
		// but the prompt's last token, which would then run as a pass of
		// its own, in the one-token order, where the first request ran it
		// in the prompt's batch order (model.Sequence.Prefill): the same
		// text, logprobs an ulp or so apart.
		stream := c.Chat.Completions.NewStreaming(ctx, p, topK, option.WithJSONSet("cache_prompt", false))
		var got []openai.ChatCompletionTokenLogprob
		for stream.Next() {
			if ch := stream.Current(); len(ch.Choices) > 0 {
				got = append(got, ch.Choices[0].Logprobs.Content...)
			}
		}
		require.NoError(t, stream.Err())
		wl := want.Choices[0].Logprobs.Content
		require.NotEmpty(t, wl)
		require.Len(t, got, len(wl))
		for i := range wl {
			assert.Equal(t, wl[i].Token, got[i].Token, "token %d", i)
			assert.Equal(t, wl[i].Logprob, got[i].Logprob, "token %d", i)
			require.Len(t, got[i].TopLogprobs, 2)
			assert.Equal(t, wl[i].TopLogprobs[0].Token, got[i].TopLogprobs[0].Token)
		}
	})
}

// TestE2EPromptCache: a chat's next request reuses the KV cache of the
// conversation so far, with the same text as without reuse; another
// tenant's request and cache_prompt false never reuse it.
func TestE2EPromptCache(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	a, b := client(s, keyA), client(s, keyB)
	ctx := context.Background()
	first := openai.ChatCompletionNewParams{Model: "serve-fixture",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
		MaxTokens: openai.Int(8), Seed: openai.Int(3)}
	reused := func(r *openai.ChatCompletion) int {
		return extension(t, r.JSON.ExtraFields["realizar"].Raw()).ReusedTokens
	}

	r1, err := a.Chat.Completions.New(ctx, first, topK)
	require.NoError(t, err)
	assert.Zero(t, reused(r1), "nothing held yet")
	next := first
	next.Messages = append(slices.Clone(first.Messages), openai.AssistantMessage(r1.Choices[0].Message.Content),
		openai.UserMessage("And then?"))

	r2, err := a.Chat.Completions.New(ctx, next, topK)
	require.NoError(t, err)
	assert.Greater(t, reused(r2), int(r1.Usage.PromptTokens)/2, "the conversation so far is reused")
	assert.Less(t, reused(r2), int(r2.Usage.PromptTokens))

	uncached, err := a.Chat.Completions.New(ctx, next, topK, option.WithJSONSet("cache_prompt", false))
	require.NoError(t, err)
	assert.Zero(t, reused(uncached))
	assert.Equal(t, uncached.Choices[0].Message.Content, r2.Choices[0].Message.Content, "reuse does not change the text")

	other, err := b.Chat.Completions.New(ctx, next, topK)
	require.NoError(t, err)
	assert.Zero(t, reused(other), "another tenant's request never reuses tenant A's cache")
	assert.Equal(t, r2.Choices[0].Message.Content, other.Choices[0].Message.Content)
	again, err := b.Chat.Completions.New(ctx, next, topK)
	require.NoError(t, err)
	assert.Equal(t, int(again.Usage.PromptTokens)-1, reused(again), "the same request again reuses all but its last token")
	assert.Equal(t, r2.Choices[0].Message.Content, again.Choices[0].Message.Content)
}

// TestE2ESlots: with one KV-cache slot, tenants taking turns evict each
// other's prompt cache; with two, each keeps its own, with the same text.
func TestE2ESlots(t *testing.T) {
	ctx := context.Background()
	conversation := func(c openai.Client) (first, next openai.ChatCompletionNewParams) {
		first = openai.ChatCompletionNewParams{Model: "serve-fixture",
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
			MaxTokens: openai.Int(8), Seed: openai.Int(3)}
		r, err := c.Chat.Completions.New(ctx, first, topK)
		require.NoError(t, err)
		next = first
		next.Messages = append(slices.Clone(first.Messages), openai.AssistantMessage(r.Choices[0].Message.Content),
			openai.UserMessage("And then?"))
		return first, next
	}
	texts := map[int]string{}
	for _, slots := range []int{1, 2} {
		t.Run(fmt.Sprintf("slots %d", slots), func(t *testing.T) {
			s := startServerSlots(t, testTenantsFile(), 64, slots)
			a, b := client(s, keyA), client(s, keyB)
			_, nextA := conversation(a)
			_, _ = conversation(b) // tenant B takes a turn in between
			r, err := a.Chat.Completions.New(ctx, nextA, topK)
			require.NoError(t, err)
			reused := extension(t, r.JSON.ExtraFields["realizar"].Raw()).ReusedTokens
			if slots == 1 {
				assert.Zero(t, reused, "B's turn took the one slot")
			} else {
				assert.Positive(t, reused, "A kept its own slot")
			}
			texts[slots] = r.Choices[0].Message.Content
		})
	}
	assert.Equal(t, texts[1], texts[2], "a slot changes speed, not text")
}
