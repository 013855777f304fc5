package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
)

// gemma3's config: its fixed features, the sliding layers from the
// pattern, their RoPE base, the global layers' scaling, the query and
// embedding scales.
func TestGemma3Config(t *testing.T) {
	sp := tinySpec("gemma3")
	tinyGemma3(&sp)
	m := open(t, sp.write(t), Options{Threads: 1})
	want := Config{
		Arch: "gemma3", Layers: 2, Embd: 64, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 32, RopeDims: 32,
		RopeType: RopeNeox, RopeBase: 1e6, RopeFreqScale: 0.125, RopeAttnFactor: 1, RopeOrigCtx: 64,
		RMSEps: 1e-5, QKNorm: true, ScaleQ: true, QueryScale: 1 / float32(math.Sqrt(32)),
		SlidingWindow: 3, SlidingLayers: []bool{true, false}, RopeBaseSWA: 10000,
		EmbdScale: 8, PostNorms: true, GELU: true, ContextLength: 64, Vocab: 80,
	}
	assert.Equal(t, want, m.Config())
	assert.True(t, m.Config().Sliding(0))
	assert.False(t, m.Config().Sliding(1))
	assert.False(t, m.Config().Sliding(2))
	assert.True(t, m.TiedOutput())
	assert.Empty(t, m.RopeFactors())
	w := m.Weights().Layers[1]
	assert.Len(t, w.AttnPostNorm, 64)
	assert.Len(t, w.FFNPostNorm, 64)
	assert.Len(t, w.QNorm, 32)
}

// sliding_window_pattern as llama.cpp reads it: a count n (layer l slides
// unless l%n == n-1; 0: every layer; 1: none), 6 when absent, or one flag
// per layer; no window, no sliding layer at all.
func TestGemma3SlidingPattern(t *testing.T) {
	F, T := false, true
	tests := []struct {
		name    string
		layers  int
		window  int
		pattern any // nil: absent
		want    []bool
	}{
		{"the default 6", 8, 4, nil, []bool{T, T, T, T, T, F, T, T}},
		{"a count of 3", 7, 4, uint32(3), []bool{T, T, F, T, T, F, T}},
		{"a count of 1: all global", 3, 4, uint32(1), []bool{F, F, F}},
		{"a count of 0: all sliding", 3, 4, uint32(0), []bool{T, T, T}},
		{"bools", 3, 4, []bool{F, T, F}, []bool{F, T, F}},
		{"0/1 integers", 3, 4, []int32{1, 0, 1}, []bool{T, F, T}},
		{"no window", 3, 0, uint32(2), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := tinySpec("gemma3")
			sp.layers, sp.window, sp.headDim = tt.layers, tt.window, 32
			if tt.pattern != nil {
				sp.extraKV = []gguf.KV{{Key: "gemma3.attention.sliding_window_pattern", Value: tt.pattern}}
			}
			m := open(t, sp.write(t), Options{Threads: 1})
			assert.Equal(t, tt.want, m.Config().SlidingLayers)
			for l := range tt.layers {
				assert.Equal(t, tt.want != nil && tt.want[l], m.Config().Sliding(l), "layer %d", l)
			}
		})
	}
}

// Gemma 3 27B (62 layers) scales the query by 1/sqrt(n_embd/n_head), as
// llama.cpp's gemma3 loader.
func TestGemma3QueryScale27B(t *testing.T) {
	c, err := decodeConfig(fakeMetadata{
		"general.architecture": "gemma3", "gemma3.block_count": uint32(62), "gemma3.embedding_length": uint32(5376),
		"gemma3.feed_forward_length": uint32(21504), "gemma3.context_length": uint32(131072),
		"gemma3.attention.head_count": uint32(32), "gemma3.attention.head_count_kv": uint32(16),
		"gemma3.attention.key_length": uint32(128), "gemma3.attention.value_length": uint32(128),
		"gemma3.attention.layer_norm_rms_epsilon": float32(1e-6), "gemma3.attention.sliding_window": uint32(1024),
	})
	require.NoError(t, err)
	assert.Equal(t, 1/float32(math.Sqrt(168)), c.QueryScale)
	assert.Equal(t, float32(math.Sqrt(5376)), c.EmbdScale)
	assert.Equal(t, 62, len(c.SlidingLayers))
	assert.False(t, c.Sliding(5))
	assert.True(t, c.Sliding(61)) // 61 % 6 == 1
}

// The window is applied: a window of 3 changes the logits from the
// fourth position on (the sliding layer then sees fewer positions), and
// not before.
func TestGemma3WindowChangesLogits(t *testing.T) {
	sp := tinySpec("gemma3")
	tinyGemma3(&sp)
	narrow := stepAll(t, open(t, sp.write(t), Options{Threads: 1}).NewSequence(), testTokens[:6])
	sp.window = 64 // the whole context
	wide := stepAll(t, open(t, sp.write(t), Options{Threads: 1}).NewSequence(), testTokens[:6])
	for i := range 3 {
		assert.Equal(t, wide[i], narrow[i], "position %d", i)
	}
	for i := 3; i < 6; i++ {
		assert.NotEqual(t, wide[i], narrow[i], "position %d", i)
	}
}

// Bad gemma3 metadata is a *ConfigError naming the key.
func TestGemma3ConfigErrors(t *testing.T) {
	pat := "gemma3.attention.sliding_window_pattern"
	tests := []struct {
		name    string
		window  int
		kv      []gguf.KV
		key     string
		mention string
	}{
		{"a window of 0", 0, []gguf.KV{{Key: "gemma3.attention.sliding_window", Value: uint32(0)}},
			"gemma3.attention.sliding_window", "= 0"},
		{"a window past the context", 65, nil, "gemma3.attention.sliding_window", "exceeds the context length 64"},
		{"a window of the wrong type", 0, []gguf.KV{{Key: "gemma3.attention.sliding_window", Value: "512"}},
			"gemma3.attention.sliding_window", "gemma3.attention.sliding_window"},
		{"a pattern of the wrong length", 3, []gguf.KV{{Key: pat, Value: []bool{true}}}, pat, "1 entries for 2 layers"},
		{"a pattern of strings", 3, []gguf.KV{{Key: pat, Value: []string{"a", "b"}}}, pat, pat},
		{"a pattern flag of 2", 3, []gguf.KV{{Key: pat, Value: []uint32{1, 2}}}, pat, pat + "[1] = 2"},
		{"a pattern of the wrong type", 3, []gguf.KV{{Key: pat, Value: float32(2)}}, pat, pat},
		{"a swa base of 0", 3, []gguf.KV{{Key: "gemma3.rope.freq_base_swa", Value: float32(0)}},
			"gemma3.rope.freq_base_swa", "out of range"},
		{"a negative softcap", 3, []gguf.KV{{Key: "gemma3.final_logit_softcapping", Value: float32(-1)}},
			"gemma3.final_logit_softcapping", "positive cap"},
		{"sliding heads of another width", 3, []gguf.KV{{Key: "gemma3.attention.key_length_swa", Value: uint32(16)}},
			"gemma3.attention.key_length_swa", "differs from the global layers' 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := tinySpec("gemma3")
			sp.headDim, sp.window, sp.extraKV = 32, tt.window, tt.kv
			err := loadErr(t, sp.write(t))
			require.ErrorIs(t, err, ErrConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.key, ce.Key)
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

// A gemma3 file missing a post-sublayer norm fails naming the tensor.
func TestGemma3MissingPostNorm(t *testing.T) {
	sp := tinySpec("gemma3")
	tinyGemma3(&sp)
	sp.omit = map[string]bool{"blk.1.post_ffw_norm.weight": true}
	err := loadErr(t, sp.write(t))
	require.ErrorIs(t, err, ErrMissingTensor)
	assert.Contains(t, err.Error(), "blk.1.post_ffw_norm.weight")
}

// fakeMetadata is metadata from a map, for configs too large to write.
type fakeMetadata map[string]any

func (f fakeMetadata) Lookup(key string) (any, bool) { v, ok := f[key]; return v, ok }

func (f fakeMetadata) get(key string) (any, error) {
	v, ok := f[key]
	if !ok {
		return nil, &gguf.KeyError{Key: key, Err: gguf.ErrKeyNotFound}
	}
	return v, nil
}

func (f fakeMetadata) String(key string) (string, error) {
	v, err := f.get(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", &gguf.KeyError{Key: key, Err: gguf.ErrTypeMismatch}
	}
	return s, nil
}

func (f fakeMetadata) Uint32(key string) (uint32, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	u, ok := v.(uint32)
	if !ok {
		return 0, &gguf.KeyError{Key: key, Err: gguf.ErrTypeMismatch}
	}
	return u, nil
}

func (f fakeMetadata) Float32(key string) (float32, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	x, ok := v.(float32)
	if !ok {
		return 0, &gguf.KeyError{Key: key, Err: gguf.ErrTypeMismatch}
	}
	return x, nil
}
