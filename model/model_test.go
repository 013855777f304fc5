package model

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
)

var testTokens = []int32{1, 17, 42, 5, 79, 0, 33, 33, 12, 64, 3, 8}

// stepAll steps tokens from position 0 and returns a copy of every
// position's logits.
func stepAll(t testing.TB, s *Sequence, tokens []int32) [][]float32 {
	t.Helper()
	s.Reset()
	out := make([][]float32, len(tokens))
	for i, tok := range tokens {
		l, err := s.Step(tok, i)
		require.NoError(t, err)
		out[i] = append([]float32(nil), l...)
	}
	return out
}

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		arch    string
		rope    RopeType
		qkNorm  bool
		headDim int // 0: embd/heads (16)
	}{
		{"llama", RopeNorm, false, 0},
		{"qwen2", RopeNeox, false, 0},
		{"qwen3", RopeNeox, true, 0},
		{"qwen3", RopeNeox, true, 32}, // Q wider than the residual stream
		{"qwen3moe", RopeNeox, true, 32},
	}
	for _, tt := range tests {
		t.Run(tt.arch, func(t *testing.T) {
			sp := tinySpec(tt.arch)
			sp.ropeBase = 500000
			sp.headDim = tt.headDim
			want := Config{
				Arch: tt.arch, Layers: 2, Embd: 64, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: max(tt.headDim, 16),
				RopeDims: max(tt.headDim, 16), RopeType: tt.rope, RopeBase: 500000, RopeFreqScale: 1, RMSEps: 1e-5,
				RopeAttnFactor: 1, RopeOrigCtx: 64, QKNorm: tt.qkNorm, ContextLength: 64, Vocab: 80,
			}
			if tt.arch == "qwen3moe" {
				tinyMoE(&sp)
				want.Experts, want.ExpertsUsed, want.ExpertFFN = 8, 2, 32
			}
			hd := want.HeadDim
			m := open(t, sp.write(t), Options{Threads: 1})
			assert.Equal(t, want, m.Config())
			assert.Equal(t, tt.arch == "qwen3moe", m.Config().MoE())
			assert.Equal(t, 2*hd, m.Config().KVDim())
			assert.Equal(t, 4*hd, m.Config().QDim())
		})
	}
}

// The forward agrees with an independent float64 forward over the same
// weights, for every weight type: llama (NORM RoPE, untied), qwen2 (NEOX
// RoPE, Q/K/V biases), a tied head and Llama 3 rope_freqs. The bound
// covers activation quantization: exact for F32/F16/BF16 activations up to
// f32 accumulation, Q8_0/Q8_K rounding (relative 1/254 per value) otherwise.
func TestForwardMatchesNaive(t *testing.T) {
	type variant struct {
		name   string
		mutate func(*spec)
		minCos float64
	}
	variants := []variant{
		{"llama f32", func(s *spec) {}, 0.99999},
		{"qwen2 f32 biases", func(s *spec) { s.arch, s.biases = "qwen2", true }, 0.99999},
		{"llama tied", func(s *spec) { s.tied = true }, 0.99999},
		{"llama rope_freqs", func(s *spec) { s.ropeFreqs = true }, 0.99999},
		{"llama f16", func(s *spec) { s.weight = quant.F16 }, 0.99999},
		{"llama bf16", func(s *spec) { s.weight = quant.BF16 }, 0.9999},
		{"llama q8_0", func(s *spec) { s.weight = quant.Q8_0 }, 0.999},
		{"llama q5_0", func(s *spec) { s.weight = quant.Q5_0 }, 0.999},
		{"llama q4_0", func(s *spec) { s.weight = quant.Q4_0 }, 0.999},
		{"qwen2 q4_k", func(s *spec) { *s = kSpec("qwen2", quant.Q4_K); s.biases = true }, 0.999},
		{"qwen3 f32", func(s *spec) { s.arch = "qwen3" }, 0.99999},
		{"qwen3 f32 head_dim 32", func(s *spec) { s.arch, s.headDim = "qwen3", 32 }, 0.99999},
		{"qwen3 f16 head_dim 32 tied", func(s *spec) { s.arch, s.headDim, s.weight, s.tied = "qwen3", 32, quant.F16, true }, 0.99999},
		{"qwen3 q4_k head_dim 128", func(s *spec) { *s = kSpec("qwen3", quant.Q4_K); s.headDim = 128 }, 0.999},
		{"qwen3moe f32", tinyMoE, 0.99999},
		{"qwen3moe f32 one expert used", func(s *spec) { tinyMoE(s); s.used = 1 }, 0.99999},
		{"qwen3moe f32 expert width from n_ff", func(s *spec) { tinyMoE(s); s.expertFFN, s.ffn = 0, 64 }, 0.99999},
		{"qwen3moe f16 all experts used", func(s *spec) { tinyMoE(s); s.used, s.weight = 8, quant.F16 }, 0.99999},
		{"qwen3moe q4_k", func(s *spec) { *s = moeSpec() }, 0.999},
		{"phi3 f32", tinyPhi3, 0.99999},
		{"phi3 f32 short factors", func(s *spec) { tinyPhi3(s); s.origCtx = 256 }, 0.99999},
		{"phi3 f32 no factors, full rotary", func(s *spec) { tinyPhi3(s); s.longRoPE, s.ropeDims = false, 0 }, 0.99999},
		{"phi3 f32 separate q/k/v", func(s *spec) { tinyPhi3(s); s.separateQKV = true }, 0.99999},
		{"phi3 f16 tied", func(s *spec) { tinyPhi3(s); s.weight, s.tied = quant.F16, true }, 0.99999},
		{"phi3 q4_k", func(s *spec) { *s = phi3Spec() }, 0.999},
		// gemma3's GELU goes through an f16 table: a relative 2^-11 per
		// gated value, hence the looser bound for F32.
		{"gemma3 f32", tinyGemma3, 0.9999},
		{"gemma3 f32 default pattern, own swa base, untied", func(s *spec) {
			tinyGemma3(s)
			s.tied, s.extraKV = false, []gguf.KV{{Key: "gemma3.rope.freq_base_swa", Value: float32(5000)}}
		}, 0.9999},
		{"gemma3 f32 per-layer flags, softcap", func(s *spec) {
			tinyGemma3(s)
			s.extraKV = []gguf.KV{{Key: "gemma3.attention.sliding_window_pattern", Value: []bool{false, true}},
				{Key: "gemma3.final_logit_softcapping", Value: float32(3)}}
		}, 0.9999},
		{"gemma3 f32 no window", func(s *spec) { tinyGemma3(s); s.window, s.extraKV = 0, nil }, 0.9999},
		{"gemma3 f16", func(s *spec) { tinyGemma3(s); s.weight = quant.F16 }, 0.9999},
		{"gemma3 q4_k", func(s *spec) { *s = gemma3Spec() }, 0.999},
		{"llama q5_k", func(s *spec) { *s = kSpec("llama", quant.Q5_K) }, 0.999},
		{"llama q6_k tied", func(s *spec) { *s = kSpec("llama", quant.Q6_K); s.tied = true }, 0.999},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			sp := tinySpec("llama")
			v.mutate(&sp)
			path := sp.write(t)
			m := open(t, path, Options{Threads: 2})
			toks := testTokens[:8]
			got := stepAll(t, m.NewSequence(), toks)
			want := naiveLogits(t, path, toks)
			for i := range toks {
				for _, x := range got[i] {
					require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0), "position %d", i)
				}
				assert.GreaterOrEqual(t, cosine(got[i], want[i]), v.minCos, "position %d", i)
			}
		})
	}
}

// kSpec is a tiny model whose widths are whole K-quant super-blocks.
func kSpec(arch string, weight quant.Type) spec {
	return spec{arch: arch, embd: 256, ffn: 512, layers: 2, heads: 4, kvHeads: 2, vocab: 80, ctx: 64, seed: 3, weight: weight}
}

// moeSpec is a Q4_K qwen3moe: 8 experts of 256, 2 used per token, heads
// of 128 (Q twice the residual stream's width), tied output.
func moeSpec() spec {
	s := kSpec("qwen3moe", quant.Q4_K)
	s.headDim, s.tied = 128, true
	s.experts, s.used, s.expertFFN = 8, 2, 256
	return s
}

// tinyMoE makes s a tiny qwen3moe: 8 experts of 32, 2 used.
func tinyMoE(s *spec) {
	s.arch, s.experts, s.used, s.expertFFN = "qwen3moe", 8, 2, 32
}

// tinyPhi3 makes s a tiny phi3: fused attn_qkv and gate-up, 12 of 16
// values per head rotated, LongRoPE factors (the long ones: the context
// padded to 256 exceeds the original 32) and an attn_factor.
func tinyPhi3(s *spec) {
	s.arch, s.ropeDims, s.longRoPE, s.origCtx, s.attnFactor = "phi3", 12, true, 32, 1.19
}

// phi3Spec is a Q4_K phi3: heads of 64 with 48 rotated, 2 KV heads,
// LongRoPE's long factors and an attn_factor.
func phi3Spec() spec {
	s := kSpec("phi3", quant.Q4_K)
	s.ropeDims, s.longRoPE, s.origCtx, s.attnFactor = 48, true, 32, 1.19
	return s
}

// tinyGemma3 makes s a tiny gemma3: heads of 32 (Q twice the residual
// stream's width), a window of 3 positions on layer 0 (pattern 2: sliding,
// then global), rope base 1e6 and linear scaling 8 on the global layer
// (the sliding one takes rope.freq_base_swa's default 10000, unscaled), a
// tied output.
func tinyGemma3(s *spec) {
	s.arch, s.headDim, s.tied, s.window, s.ropeBase = "gemma3", 32, true, 3, 1e6
	s.extraKV = []gguf.KV{{Key: "gemma3.attention.sliding_window_pattern", Value: uint32(2)},
		{Key: "gemma3.rope.scaling.type", Value: "linear"}, {Key: "gemma3.rope.scaling.factor", Value: float32(8)}}
}

// gemma3Spec is a Q4_K gemma3: 4 heads of 128 over one KV head, the
// sliding and global layers and RoPE of tinyGemma3 with a window of 5.
func gemma3Spec() spec {
	s := kSpec("gemma3", quant.Q4_K)
	tinyGemma3(&s)
	s.headDim, s.kvHeads, s.window = 128, 1, 5
	return s
}

// qwen3Spec is a Q4_K qwen3 whose heads (128 wide) make Q twice the
// residual stream's width.
func qwen3Spec() spec {
	s := kSpec("qwen3", quant.Q4_K)
	s.headDim, s.tied = 128, true
	return s
}

func TestTiedOutput(t *testing.T) {
	sp := tinySpec("llama")
	sp.tied = true
	assert.True(t, open(t, sp.write(t), Options{}).TiedOutput())
	assert.False(t, open(t, tinySpec("llama").write(t), Options{}).TiedOutput())
}

// Results depend on nothing but the inputs: two Steps, and 1 or 3 threads,
// give the same bits.
func TestDeterministic(t *testing.T) {
	path := kSpec("llama", quant.Q4_K).write(t)
	one := open(t, path, Options{Threads: 1})
	three := open(t, path, Options{Threads: 3})
	want := stepAll(t, one.NewSequence(), testTokens)
	assert.Equal(t, want, stepAll(t, one.NewSequence(), testTokens))
	assert.Equal(t, want, stepAll(t, three.NewSequence(), testTokens))
}

// A decode step allocates nothing once its scratch has grown: no closures
// handed to the pool, no per-position scratch (the position advances every
// step), at one thread and several.
func TestStepAllocs(t *testing.T) {
	for _, sp := range []spec{kSpec("llama", quant.Q4_K), moeSpec(), gemma3Spec()} {
		stepAllocs(t, sp)
	}
}

func stepAllocs(t *testing.T, sp spec) {
	path := sp.write(t)
	for _, threads := range []int{1, 2} {
		m := open(t, path, Options{Threads: threads})
		s := m.NewSequence()
		_, err := s.Reserve(64)
		require.NoError(t, err)
		_, err = s.Step(1, 0)
		require.NoError(t, err)
		pos := 1
		allocs := testing.AllocsPerRun(40, func() {
			_, err := s.Step(int32(pos%m.cfg.Vocab), pos)
			require.NoError(t, err)
			pos++
		})
		assert.Zero(t, allocs, "%s threads %d", sp.arch, threads)
	}
}

// prefillOne returns the logits after tokens prefilled from position 0 in
// one pass (a fresh Step of m, whose BatchSize must cover them).
func prefillOne(t *testing.T, m *Model, tokens []int32) []float32 {
	t.Helper()
	got, err := m.NewSequence().Prefill(tokens, 0)
	require.NoError(t, err)
	return append([]float32(nil), got...)
}

// Prefill computes a pass's rows of one sequence in ggml's batch orders
// when the pass holds two or more of them (llamafile's for the F16 and F32
// products: attention's always, the weights' in F16/F32 files), and in the
// one-token order otherwise. So batches of 1 equal Step-by-step logits bit
// for bit, and a span cut into batches of two or more tokens equals the
// span in one pass, wherever it starts (Prefill never leaves one token for
// its last pass: 10 tokens in batches of 3 are 3+3+2+2); a Prefill of one
// token is the one-token order. Q4_K, Q6_K and the tiny model's types, and the new
// architectures.
func TestPrefillEqualsStep(t *testing.T) {
	toks := testTokens[:10]
	differs := 0 // specs whose batch bits are not the one-token bits
	for _, sp := range []spec{kSpec("qwen2", quant.Q4_K), kSpec("llama", quant.Q6_K), tinySpec("llama"), qwen3Spec(), moeSpec(), phi3Spec()} {
		path := sp.write(t)
		one := open(t, path, Options{Threads: 2, BatchSize: 1})
		want := stepAll(t, one.NewSequence(), toks)
		got, err := one.NewSequence().Prefill(toks, 0)
		require.NoError(t, err)
		assert.Equal(t, want[len(toks)-1], got, "%s batch 1", sp.arch)

		m := open(t, path, Options{Threads: 2, BatchSize: 64})
		whole := prefillOne(t, m, toks)
		if !slices.Equal(want[len(toks)-1], whole) {
			differs++
		}
		for _, batch := range []int{2, 3, 4, 64} { // chunks 2+…+2, 3+3+2+2, 4+4+2, 10
			mb := open(t, path, Options{Threads: 2, BatchSize: batch})
			s := mb.NewSequence()
			got, err := s.Prefill(toks, 0)
			require.NoError(t, err)
			assert.Equal(t, whole, got, "%s batch %d from 0", sp.arch, batch)

			// A prefill continuing a held prefix, then a step after it.
			s.Reset()
			_, err = s.Prefill(toks[:5], 0)
			require.NoError(t, err)
			got, err = s.Prefill(toks[:9], 5)
			require.NoError(t, err)
			assert.Equal(t, prefillOne(t, m, toks[:9]), got, "%s batch %d from 5", sp.arch, batch)
			got, err = s.Step(toks[9], 9)
			require.NoError(t, err)
			ref := m.NewSequence()
			_, err = ref.Prefill(toks[:9], 0)
			require.NoError(t, err)
			want9, err := ref.Step(toks[9], 9)
			require.NoError(t, err)
			assert.Equal(t, want9, got, "%s batch %d step after prefill", sp.arch, batch)
		}
		// Batches of 3 over 9 tokens, then one Prefill of the tenth: a
		// pass of one token, Step's order.
		m3 := open(t, path, Options{Threads: 2, BatchSize: 3})
		s3 := m3.NewSequence()
		_, err = s3.Prefill(toks[:9], 0)
		require.NoError(t, err)
		got, err = s3.Prefill(toks, 9)
		require.NoError(t, err)
		ref := m.NewSequence()
		_, err = ref.Prefill(toks[:9], 0)
		require.NoError(t, err)
		want9, err := ref.Step(toks[9], 9)
		require.NoError(t, err)
		assert.Equal(t, want9, got, "%s batch 3, then one token", sp.arch)
	}
	// The tiny test models' sums often round alike in both orders; some
	// must not, or the batch orders are not in use.
	assert.Positive(t, differs, "no spec's batch logits differ from its one-token logits")
}

// Reserve grows the cache keeping its contents (dropped = false): results
// after growing equal those of a Step that never grew.
func TestReserveKeepsResults(t *testing.T) {
	m := open(t, tinySpec("llama").write(t), Options{Threads: 2})
	want := stepAll(t, m.NewSequence(), testTokens)

	s := m.NewSequence()
	dropped, err := s.Reserve(3)
	require.NoError(t, err)
	assert.False(t, dropped)
	assert.EqualValues(t, 2*3*32*2*2, s.CacheBytes())
	for i, tok := range testTokens {
		if i == 2 || i == 7 {
			dropped, err := s.Reserve(i + 5)
			require.NoError(t, err)
			require.False(t, dropped)
		}
		got, err := s.Step(tok, i)
		require.NoError(t, err)
		assert.Equal(t, want[i], got, "position %d", i)
	}

	_, err = s.Reserve(65)
	assert.ErrorIs(t, err, forward.ErrContextExceeded)
	_, err = s.Reserve(0)
	assert.ErrorIs(t, err, ErrPosition)
}

// Stepping back to an earlier position replaces what followed it.
func TestStepRewind(t *testing.T) {
	m := open(t, tinySpec("llama").write(t), Options{Threads: 1})
	want := stepAll(t, m.NewSequence(), testTokens)
	s := m.NewSequence()
	stepAll(t, s, []int32{1, 17, 42, 9, 9, 9})
	got, err := s.Step(testTokens[3], 3)
	require.NoError(t, err)
	assert.Equal(t, want[3], got)
}

func TestStepErrors(t *testing.T) {
	sp := tinySpec("llama")
	sp.ctx = 4
	m := open(t, sp.write(t), Options{Threads: 1})
	s := m.NewSequence()

	_, err := s.Step(80, 0)
	assert.ErrorIs(t, err, forward.ErrBadToken)
	_, err = s.Step(-1, 0)
	assert.ErrorIs(t, err, forward.ErrBadToken)
	_, err = s.Step(1, 1)
	assert.ErrorIs(t, err, ErrPosition, "position 1 before 0")

	_, err = s.Prefill([]int32{1, 2, 3, 4, 5}, 0)
	assert.ErrorIs(t, err, forward.ErrContextExceeded)
	_, err = s.Prefill([]int32{1, 2}, 2)
	assert.ErrorIs(t, err, ErrPosition, "nothing to prefill")
	_, err = s.Prefill([]int32{1, 2}, 1)
	assert.ErrorIs(t, err, ErrPosition, "prefix not held")

	for i := range 4 {
		_, err = s.Step(1, i)
		require.NoError(t, err)
	}
	_, err = s.Step(1, 4)
	assert.ErrorIs(t, err, forward.ErrContextExceeded)

	name, onGPU := s.Backend()
	assert.Equal(t, "cpu-"+quant.Fast().Name, name)
	assert.False(t, onGPU)
}

// f32Matrix is a zero [cols, rows] F32 tensor.
func f32Matrix(name string, cols, rows int64) gguf.Tensor {
	return gguf.Tensor{Name: name, Type: gguf.TypeF32, Dims: []int64{cols, rows}, Data: make([]byte, 4*cols*rows)}
}

func TestLoadErrors(t *testing.T) {
	randomBlocks := func(typ gguf.TensorType, rowLen, rows int64) gguf.Tensor {
		rs, ok := typ.RowSize(rowLen)
		require.True(t, ok)
		return gguf.Tensor{Name: "blk.1.ffn_down.weight", Type: typ, Dims: []int64{rowLen, rows}, Data: make([]byte, rs*rows)}
	}
	tests := []struct {
		name     string
		mutate   func(*spec)
		sentinel error
		mention  string
	}{
		{
			name:     "unsupported architecture",
			mutate:   func(s *spec) { s.arch = "gpt2" },
			sentinel: ErrUnsupportedArch, mention: `"gpt2"`,
		},
		{
			name: "unsupported tensor type",
			mutate: func(s *spec) {
				*s = kSpec("llama", quant.Q4_K)
				s.override = map[string]gguf.Tensor{"blk.1.ffn_down.weight": randomBlocks(gguf.TypeQ2_K, 512, 256)}
			},
			sentinel: ErrUnsupportedType, mention: "blk.1.ffn_down.weight",
		},
		{
			name: "wrong shape",
			mutate: func(s *spec) {
				s.override = map[string]gguf.Tensor{"blk.1.ffn_down.weight": randomBlocks(gguf.TypeF32, 64, 96)}
			},
			sentinel: ErrShape, mention: "blk.1.ffn_down.weight",
		},
		{
			name:     "missing tensor",
			mutate:   func(s *spec) { s.omit = map[string]bool{"blk.0.attn_k.weight": true} },
			sentinel: ErrMissingTensor, mention: "blk.0.attn_k.weight",
		},
		{
			name:     "longrope rope scaling",
			mutate:   func(s *spec) { s.extraKV = []gguf.KV{{Key: "llama.rope.scaling.type", Value: "longrope"}} },
			sentinel: ErrConfig, mention: "llama.rope.scaling.type",
		},
		{
			name: "qwen3 without attn_q_norm",
			mutate: func(s *spec) {
				s.arch = "qwen3"
				s.omit = map[string]bool{"blk.1.attn_q_norm.weight": true}
			},
			sentinel: ErrMissingTensor, mention: "blk.1.attn_q_norm.weight",
		},
		{
			name: "qwen3 attn_k_norm of embd/heads with key_length 32",
			mutate: func(s *spec) {
				s.arch, s.headDim = "qwen3", 32
				s.override = map[string]gguf.Tensor{"blk.0.attn_k_norm.weight": {
					Name: "blk.0.attn_k_norm.weight", Type: gguf.TypeF32, Dims: []int64{16}, Data: make([]byte, 4*16)}}
			},
			sentinel: ErrShape, mention: "blk.0.attn_k_norm.weight",
		},
		{
			name: "qwen3 attn_q of embd rows with key_length 32",
			mutate: func(s *spec) {
				s.arch, s.headDim = "qwen3", 32
				s.override = map[string]gguf.Tensor{"blk.0.attn_q.weight": f32Matrix("blk.0.attn_q.weight", 64, 64)}
			},
			sentinel: ErrShape, mention: "blk.0.attn_q.weight",
		},
		{
			name: "qwen3moe expert_count 0",
			mutate: func(s *spec) {
				tinyMoE(s)
				s.extraKV = []gguf.KV{{Key: "qwen3moe.expert_count", Value: uint32(0)}}
				s.experts = 0
			},
			sentinel: ErrConfig, mention: "qwen3moe.expert_count",
		},
		{
			name:     "qwen3moe without expert_count",
			mutate:   func(s *spec) { tinyMoE(s); s.experts = 0 },
			sentinel: gguf.ErrKeyNotFound, mention: "qwen3moe.expert_count",
		},
		{
			name: "qwen3moe expert_used_count 0",
			mutate: func(s *spec) {
				tinyMoE(s)
				s.extraKV = []gguf.KV{{Key: "qwen3moe.expert_used_count", Value: uint32(0)}}
				s.used = 0
			},
			sentinel: ErrConfig, mention: "qwen3moe.expert_used_count",
		},
		{
			name:     "qwen3moe expert_used_count above expert_count",
			mutate:   func(s *spec) { tinyMoE(s); s.used = 9 },
			sentinel: ErrConfig, mention: "qwen3moe.expert_used_count = 9 exceeds qwen3moe.expert_count = 8",
		},
		{
			name:     "qwen3moe expert_count above llama.cpp's limit",
			mutate:   func(s *spec) { tinyMoE(s); s.experts = 513; s.omit = map[string]bool{} },
			sentinel: ErrConfig, mention: "qwen3moe.expert_count = 513",
		},
		{
			name:     "qwen3moe without an expert width",
			mutate:   func(s *spec) { tinyMoE(s); s.expertFFN, s.ffn = 0, 1 }, // n_ff/used is 0
			sentinel: gguf.ErrKeyNotFound, mention: "qwen3moe.expert_feed_forward_length",
		},
		{
			name: "qwen3moe merged experts of the wrong count",
			mutate: func(s *spec) {
				tinyMoE(s)
				s.override = map[string]gguf.Tensor{"blk.1.ffn_up_exps.weight": {
					Name: "blk.1.ffn_up_exps.weight", Type: gguf.TypeF32, Dims: []int64{64, 32, 7}, Data: make([]byte, 4*64*32*7)}}
			},
			sentinel: ErrShape, mention: "blk.1.ffn_up_exps.weight",
		},
		{
			name:     "qwen3moe without its router",
			mutate:   func(s *spec) { tinyMoE(s); s.omit = map[string]bool{"blk.0.ffn_gate_inp.weight": true} },
			sentinel: ErrMissingTensor, mention: "blk.0.ffn_gate_inp.weight",
		},
		{
			name:     "phi3 rotating more than a head",
			mutate:   func(s *spec) { tinyPhi3(s); s.ropeDims = 18 },
			sentinel: ErrConfig, mention: "phi3.rope.dimension_count",
		},
		{
			name:     "phi3 rotating an odd count",
			mutate:   func(s *spec) { tinyPhi3(s); s.ropeDims = 11; s.longRoPE = false },
			sentinel: ErrConfig, mention: "phi3.rope.dimension_count",
		},
		{
			name:     "llama rotating part of a head",
			mutate:   func(s *spec) { s.ropeDims = 12 },
			sentinel: ErrConfig, mention: "llama.rope.dimension_count",
		},
		{
			name: "phi3 ffn_up of n_ff rows (not gate and up)",
			mutate: func(s *spec) {
				tinyPhi3(s)
				s.override = map[string]gguf.Tensor{"blk.1.ffn_up.weight": f32Matrix("blk.1.ffn_up.weight", 64, 96)}
			},
			sentinel: ErrShape, mention: "blk.1.ffn_up.weight",
		},
		{
			name: "phi3 attn_qkv without the V rows",
			mutate: func(s *spec) {
				tinyPhi3(s)
				s.override = map[string]gguf.Tensor{"blk.0.attn_qkv.weight": f32Matrix("blk.0.attn_qkv.weight", 64, 96)}
			},
			sentinel: ErrShape, mention: "blk.0.attn_qkv.weight",
		},
		{
			name: "phi3 rope_factors_long of the wrong length",
			mutate: func(s *spec) {
				tinyPhi3(s)
				s.override = map[string]gguf.Tensor{"rope_factors_long.weight": {
					Name: "rope_factors_long.weight", Type: gguf.TypeF32, Dims: []int64{8}, Data: make([]byte, 32)}}
			},
			sentinel: ErrShape, mention: "rope_factors_long.weight",
		},
		{
			name: "phi3 sliding_window of the wrong type",
			mutate: func(s *spec) {
				tinyPhi3(s)
				s.extraKV = []gguf.KV{{Key: "phi3.attention.sliding_window", Value: "2047"}}
			},
			sentinel: ErrConfig, mention: "phi3.attention.sliding_window",
		},
		{
			name:     "heads not a multiple of kv heads",
			mutate:   func(s *spec) { s.kvHeads = 3 },
			sentinel: ErrConfig, mention: "head_count_kv 3",
		},
		{
			name:     "vocab_size disagreeing with the embedding",
			mutate:   func(s *spec) { s.extraKV = []gguf.KV{{Key: "llama.vocab_size", Value: uint32(81)}} },
			sentinel: ErrConfig, mention: "llama.vocab_size = 81",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := tinySpec("llama")
			tt.mutate(&sp)
			err := loadErr(t, sp.write(t))
			require.ErrorIs(t, err, tt.sentinel)
			assert.Contains(t, err.Error(), tt.mention)
			var ce *ConfigError
			if errors.Is(err, ErrConfig) {
				// Every config error names its key.
				require.ErrorAs(t, err, &ce)
				assert.NotEmpty(t, ce.Key)
				if strings.HasPrefix(tt.mention, "qwen3moe.") || strings.HasPrefix(tt.mention, "llama.") {
					assert.Equal(t, strings.Fields(tt.mention)[0], ce.Key)
				}
			}
			var te *TensorError
			if errors.Is(err, ErrMissingTensor) || errors.Is(err, ErrShape) || errors.Is(err, ErrUnsupportedType) {
				require.ErrorAs(t, err, &te)
				assert.Equal(t, tt.mention, te.Tensor)
			}
		})
	}
}
