package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
)

// phi3's config: its fixed features, partial rotary, the attn_factor and
// the sliding window, which is read but (as in llama.cpp) not applied.
func TestPhi3Config(t *testing.T) {
	sp := tinySpec("phi3")
	tinyPhi3(&sp)
	sp.extraKV = []gguf.KV{{Key: "phi3.attention.sliding_window", Value: uint32(2047)}}
	m := open(t, sp.write(t), Options{Threads: 1})
	want := Config{
		Arch: "phi3", Layers: 2, Embd: 64, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 16, RopeDims: 12,
		RopeType: RopeNeox, RopeBase: 10000, RopeFreqScale: 1, RopeAttnFactor: 1.19, RopeOrigCtx: 32,
		RMSEps: 1e-5, ScaleQ: true, QueryScale: 0.25, FusedFFN: true, SlidingWindow: 2047, ContextLength: 64, Vocab: 80,
	}
	assert.Equal(t, want, m.Config())
	w := m.Weights().Layers[0]
	assert.Equal(t, "blk.0.attn_qkv.weight", w.QKV.Name)
	assert.Equal(t, 16*4+2*16*2, w.QKV.Rows)
	assert.Equal(t, 2*96, w.Up.Rows)
	assert.Empty(t, w.Q.Name)
	assert.Empty(t, w.Gate.Name)
}

// LongRoPE's factors are chosen as llama.cpp's get_rope_factors chooses
// them: the long ones when the context per sequence, padded to 256,
// exceeds the original context.
func TestPhi3RopeFactorsByContext(t *testing.T) {
	tests := []struct {
		name     string
		origCtx  int
		ctxSize  int
		longRoPE bool
		want     string
	}{
		{"the trained context (64, padded to 256) past 32", 32, 0, true, tensorRopeLong},
		{"the trained context within 256", 256, 0, true, tensorRopeShort},
		{"a context of 256 within 256", 256, 256, true, tensorRopeShort},
		{"a context of 257 pads to 512", 256, 257, true, tensorRopeLong},
		{"a context of 1 pads to 256", 300, 1, true, tensorRopeShort},
		{"no factors in the file", 32, 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := tinySpec("phi3")
			tinyPhi3(&sp)
			sp.origCtx, sp.longRoPE = tt.origCtx, tt.longRoPE
			m := open(t, sp.write(t), Options{Threads: 1, ContextSize: tt.ctxSize})
			assert.Equal(t, tt.want, m.RopeFactors())
			if tt.want != "" {
				require.Len(t, m.Weights().RopeFactors, 6)
			}
		})
	}
}

// The short and long factors give different logits (TestForwardMatchesNaive
// checks each against the naive forward).
func TestPhi3FactorsChangeLogits(t *testing.T) {
	sp := tinySpec("phi3")
	tinyPhi3(&sp)
	sp.origCtx = 256
	path := sp.write(t)
	short := stepAll(t, open(t, path, Options{Threads: 1}).NewSequence(), testTokens[:6])
	long := stepAll(t, open(t, path, Options{Threads: 1, ContextSize: 300}).NewSequence(), testTokens[:6])
	// Position 0 rotates nothing; later positions see the factors.
	assert.Equal(t, long[0], short[0])
	assert.NotEqual(t, long[5], short[5])
}
