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

// phi3Model writes a one-layer phi3-tiny narrowed to n_embd 64 (4 heads of
// 16, 12 rotated) with vocab's tokenizer, or the embedded llama vocabulary
// when vocab is nil (about 17 MB).
func phi3Model(t *testing.T, vocab *gguf.File) string {
	t.Helper()
	if vocab == nil {
		v, err := fixture.LlamaVocab()
		require.NoError(t, err)
		defer v.Close()
		vocab = v
	}
	c := fixture.Phi3Tiny()
	c.Embd, c.FF, c.Layers, c.Context, c.RopeDims = 64, 128, 1, 512, 12 // LongRoPE over an original 256
	path := filepath.Join(t.TempDir(), "phi3.gguf")
	require.NoError(t, fixture.GenerateFile(path, c, vocab))
	return path
}

// withKV rewrites model with each of kv set: replacing a key it has, else
// appended.
func withKV(t *testing.T, model string, kv ...gguf.KV) string {
	t.Helper()
	f, err := gguf.Open(model)
	require.NoError(t, err)
	defer f.Close()
	out := append([]gguf.KV(nil), f.KV...)
	for _, p := range kv {
		found := false
		for i := range out {
			if out[i].Key == p.Key {
				out[i].Value, found = p.Value, true
			}
		}
		if !found {
			out = append(out, p)
		}
	}
	var ts []gguf.Tensor
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		require.NoError(t, err)
		ts = append(ts, gguf.Tensor{Name: ti.Name, Type: ti.Type, Dims: ti.Dims, Data: data})
	}
	path := filepath.Join(t.TempDir(), "edited.gguf")
	require.NoError(t, gguf.WriteFile(path, out, ts))
	return path
}

// inspect names phi3's features: the fused attn_qkv, partial rotary, the
// attn_factor, LongRoPE's factors and a sliding window llama.cpp does not
// apply.
func TestInspectPhi3(t *testing.T) {
	path := withKV(t, phi3Model(t, nil), gguf.KV{Key: "phi3.attention.sliding_window", Value: uint32(2047)})
	rep, err := inspect(path)
	require.NoError(t, err)
	assert.Equal(t, "phi3", rep.Architecture)
	hp := rep.Hyperparameters
	assert.True(t, hp.FusedQKV)
	require.NotNil(t, hp.RopeDimensions)
	assert.Equal(t, uint32(12), *hp.RopeDimensions)
	require.NotNil(t, hp.RopeAttnFactor)
	assert.Equal(t, float32(1.19), *hp.RopeAttnFactor)
	assert.Equal(t, []string{"rope_factors_long.weight", "rope_factors_short.weight"}, hp.RopeFactors)
	require.NotNil(t, hp.SlidingWindow)
	assert.Equal(t, uint32(2047), *hp.SlidingWindow)

	var text strings.Builder
	require.NoError(t, rep.writeText(&text))
	for _, want := range []string{
		"architecture:", "phi3", "attention:", "fused attn_qkv", "rope_dimension_count:", "12 (partial rotary)",
		"rope_attn_factor:", "1.19", "LongRoPE: the long factors when the context exceeds 256", "sliding_window:",
		"2047 (not applied: llama.cpp disables Phi-3's)",
	} {
		assert.Contains(t, text.String(), want)
	}

	// A llama file shows none of these rows.
	dense, err := inspect(storiesModel(t))
	require.NoError(t, err)
	text.Reset()
	require.NoError(t, dense.writeText(&text))
	for _, absent := range []string{"rope_dimension_count", "rope_attn_factor", "rope_factors", "fused", "sliding_window"} {
		assert.NotContains(t, text.String(), absent)
	}
}

// run works on a phi3 file end to end (the embedded greedy sampler and stop
// policy), at either side of LongRoPE's switch, and bad phi3 metadata is
// exit 3 naming the key.
func TestRunPhi3(t *testing.T) {
	path := phi3Model(t, nil)
	for _, ctx := range []string{"128", "512"} { // short factors (128 pads to 256), long factors
		stdout, stderr, code := runIn(t, "", "run", "-m", path, "-p", "Once upon a time", "-n", "8", "--sampler", "greedy", "-c", ctx)
		require.Equal(t, 0, code, stderr)
		assert.NotEmpty(t, stdout)
	}
	for _, tc := range []struct {
		name string
		kv   gguf.KV
		msg  string
	}{
		{"rotating more than a head", gguf.KV{Key: "phi3.rope.dimension_count", Value: uint32(18)}, "phi3.rope.dimension_count = 18"},
		{"rotating an odd count", gguf.KV{Key: "phi3.rope.dimension_count", Value: uint32(11)}, "phi3.rope.dimension_count = 11"},
		{"a non-positive attn_factor", gguf.KV{Key: "phi3.rope.scaling.attn_factor", Value: float32(0)}, "phi3.rope.scaling.attn_factor"},
		{"a sliding window of the wrong type", gguf.KV{Key: "phi3.attention.sliding_window", Value: "2047"}, "phi3.attention.sliding_window"},
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

// run --chat on phi3 with llama.cpp's phi-3 vocabulary and the Phi-3.5
// template (models/templates/microsoft-Phi-3.5-mini-instruct.jinja): the
// prompt is rendered as Phi-3's <|user|> turn and runs through the WASM
// policies.
func TestChatPhi3(t *testing.T) {
	ref := llamaref(t)
	tmpl, err := os.ReadFile(filepath.Join(ref, "llama.cpp", "models", "templates", "microsoft-Phi-3.5-mini-instruct.jinja"))
	require.NoError(t, err)
	vocab, err := gguf.Open(filepath.Join(ref, "vocab", fixture.VocabFile("phi3")))
	require.NoError(t, err)
	defer vocab.Close()
	path := withKV(t, phi3Model(t, vocab), gguf.KV{Key: gguf.KeyChatTemplate, Value: string(tmpl)})

	stdout, stderr, code := runIn(t, "", "run", "-m", path, "--chat", "-p", "Hello there", "-n", "4", "--echo")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "<|user|>\nHello there<|end|>\n<|assistant|>\n"), "%q", stdout)
}
