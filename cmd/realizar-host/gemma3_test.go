package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
)

// gemma3Model writes a two-layer gemma3-tiny narrowed to n_embd 64 (4
// heads of 32 over one KV head), layer 0 sliding over 4 positions and
// layer 1 global (pattern 2), with the embedded llama vocabulary (about
// 17 MB).
func gemma3Model(t *testing.T) string {
	t.Helper()
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	c := fixture.Gemma3Tiny()
	c.Embd, c.FF, c.KeyLength, c.Layers, c.SlidingWindow, c.SlidingPattern = 64, 128, 32, 2, 4, 2
	path := filepath.Join(t.TempDir(), "gemma3.gguf")
	require.NoError(t, fixture.GenerateFile(path, c, vocab))
	return path
}

// inspect names gemma3's features: the sliding layers and their window,
// the pattern as written, their RoPE base, the global layers' scaling, the
// softcap when the file has one, and the block's fixed features.
func TestInspectGemma3(t *testing.T) {
	path := withKV(t, gemma3Model(t), gguf.KV{Key: "gemma3.final_logit_softcapping", Value: float32(30)})
	rep, err := inspect(path)
	require.NoError(t, err)
	assert.Equal(t, "gemma3", rep.Architecture)
	hp := rep.Hyperparameters
	require.NotNil(t, hp.SlidingWindow)
	assert.Equal(t, uint32(4), *hp.SlidingWindow)
	assert.Equal(t, uint32(2), hp.SlidingWindowPattern)
	assert.Equal(t, []int{0}, hp.SlidingLayers)
	require.NotNil(t, hp.RopeFreqBaseSWA)
	assert.Equal(t, float32(10000), *hp.RopeFreqBaseSWA)
	require.NotNil(t, hp.LogitSoftcap)
	assert.Equal(t, float32(30), *hp.LogitSoftcap)
	assert.Contains(t, hp.Features, "GELU-gated FFN")

	var text strings.Builder
	require.NoError(t, rep.writeText(&text))
	for _, want := range []string{
		"architecture:", "gemma3", "sliding_window:", "4 (sliding layers 0 of 2; the others global)",
		"sliding_window_pattern:", "rope_scaling:", "linear, factor 8 (global layers only)",
		"rope_freq_base_swa:", "10000 (sliding layers, unscaled)", "final_logit_softcapping:", "30",
		"features:", "embeddings scaled by sqrt(n_embd)", "per-head Q/K norms", "post-attention and post-FFN norms",
	} {
		assert.Contains(t, text.String(), want)
	}

	// Per-layer flags, as some converters write them.
	rep, err = inspect(withKV(t, path, gguf.KV{Key: "gemma3.attention.sliding_window_pattern", Value: []bool{false, true}}))
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true}, rep.Hyperparameters.SlidingWindowPattern)
	assert.Equal(t, []int{1}, rep.Hyperparameters.SlidingLayers)

	assert.Equal(t, "0-4, 6-10, 12", layerRanges([]int{0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12}))
}

// run works on a gemma3 file end to end (the embedded greedy sampler and
// stop policy) past its window, and bad gemma3 metadata is exit 3 naming
// the key.
func TestRunGemma3(t *testing.T) {
	path := gemma3Model(t)
	stdout, stderr, code := runIn(t, "", "run", "-m", path, "-p", "Once upon a time", "-n", "12", "--sampler", "greedy")
	require.Equal(t, 0, code, stderr)
	assert.NotEmpty(t, stdout)
	pat := "gemma3.attention.sliding_window_pattern"
	for _, tc := range []struct {
		name string
		kv   gguf.KV
		msg  string
	}{
		{"a window of 0", gguf.KV{Key: "gemma3.attention.sliding_window", Value: uint32(0)}, "gemma3.attention.sliding_window = 0"},
		{"a window past the context", gguf.KV{Key: "gemma3.attention.sliding_window", Value: uint32(513)},
			"gemma3.attention.sliding_window = 513 exceeds the context length 512"},
		{"a window of the wrong type", gguf.KV{Key: "gemma3.attention.sliding_window", Value: "4"}, "gemma3.attention.sliding_window"},
		{"a pattern of the wrong length", gguf.KV{Key: pat, Value: []bool{true, false, true}}, pat + " has 3 entries for 2 layers"},
		{"a pattern flag of 2", gguf.KV{Key: pat, Value: []int32{1, 2}}, pat + "[1] = 2"},
		{"a pattern of the wrong type", gguf.KV{Key: pat, Value: "2"}, pat},
		{"a negative softcap", gguf.KV{Key: "gemma3.final_logit_softcapping", Value: float32(-1)}, "gemma3.final_logit_softcapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, "", "run", "-m", withKV(t, path, tc.kv), "-p", "Once", "-n", "2")
			assert.Equal(t, exitBadFile, code, stderr)
			assert.Contains(t, stderr, tc.msg)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Empty(t, stdout)
		})
	}
}

// run --chat on gemma3 with llama.cpp's Gemma 2 template
// (models/templates/google-gemma-2-2b-it.jinja: the bundle has no Gemma 3
// one, and Gemma 3 keeps its turn markers): the prompt is rendered as a
// <start_of_turn>user turn and runs through the WASM policies.
func TestChatGemma3(t *testing.T) {
	ref := llamaref(t)
	tmpl, err := os.ReadFile(filepath.Join(ref, "llama.cpp", "models", "templates", "google-gemma-2-2b-it.jinja"))
	require.NoError(t, err)
	path := withKV(t, gemma3Model(t), gguf.KV{Key: gguf.KeyChatTemplate, Value: string(tmpl)})

	stdout, stderr, code := runIn(t, "", "run", "-m", path, "--chat", "-p", "Hello there", "-n", "4", "--echo")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "<start_of_turn>user\nHello there<end_of_turn>\n<start_of_turn>model\n"), "%q", stdout)
}
