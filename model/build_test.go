package model

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
)

// spec describes a small random-weight model for a test. Its weights are
// N(0, 1/cols) per matrix row (so activations keep their scale), norms
// 1 + N(0, 0.1²), embeddings N(0, 1), biases N(0, 0.5²).
type spec struct {
	arch              string
	embd, ffn, layers int
	heads, kvHeads    int
	headDim           int // attention.key_length/value_length when nonzero (else embd/heads)
	vocab, ctx        int
	weight            quant.Type            // type of every matrix; F32 when 0 is meant
	embdType          quant.Type            // type of token_embd (default: weight)
	types             map[string]quant.Type // a tensor's type by name, in place of weight or embdType
	tied              bool                  // no output.weight
	biases            bool                  // Q/K/V biases (qwen2 style)
	ropeFreqs         bool                  // a Llama 3 rope_freqs.weight
	ropeBase          float32               // 0: key absent (10000)
	experts, used     int                   // qwen3moe: expert_count, expert_used_count (0: keys absent)
	expertFFN         int                   // qwen3moe: expert_feed_forward_length (0: key absent)
	ropeDims          int                   // rope.dimension_count when nonzero (phi3's partial rotary)
	longRoPE          bool                  // phi3: rope_factors_long/short.weight
	origCtx           int                   // rope.scaling.original_context_length when nonzero
	attnFactor        float32               // rope.scaling.attn_factor when nonzero
	separateQKV       bool                  // phi3: attn_q/k/v instead of attn_qkv
	window            int                   // attention.sliding_window when nonzero (gemma3)
	seed              uint64
	extraKV           []gguf.KV
	override          map[string]gguf.Tensor // replaces a tensor by name
	omit              map[string]bool        // tensors to leave out
}

func tinySpec(arch string) spec {
	return spec{arch: arch, embd: 64, ffn: 96, layers: 2, heads: 4, kvHeads: 2, vocab: 80, ctx: 64, seed: 1}
}

// write builds the model file in t.TempDir and returns its path.
func (s spec) write(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), s.arch+".gguf")
	require.NoError(t, gguf.WriteFile(path, s.metadata(), s.tensors(t)))
	return path
}

// metadata is the spec's GGUF metadata.
func (s spec) metadata() []gguf.KV {
	a := s.arch
	kv := []gguf.KV{
		{Key: "general.architecture", Value: a},
		{Key: a + ".context_length", Value: uint32(s.ctx)},
		{Key: a + ".embedding_length", Value: uint32(s.embd)},
		{Key: a + ".feed_forward_length", Value: uint32(s.ffn)},
		{Key: a + ".block_count", Value: uint32(s.layers)},
		{Key: a + ".attention.head_count", Value: uint32(s.heads)},
		{Key: a + ".attention.head_count_kv", Value: uint32(s.kvHeads)},
		{Key: a + ".attention.layer_norm_rms_epsilon", Value: float32(1e-5)},
	}
	if s.headDim != 0 {
		kv = append(kv, gguf.KV{Key: a + ".attention.key_length", Value: uint32(s.headDim)},
			gguf.KV{Key: a + ".attention.value_length", Value: uint32(s.headDim)})
	}
	if s.ropeBase != 0 {
		kv = append(kv, gguf.KV{Key: a + ".rope.freq_base", Value: s.ropeBase})
	}
	if s.ropeDims != 0 {
		kv = append(kv, gguf.KV{Key: a + ".rope.dimension_count", Value: uint32(s.ropeDims)})
	}
	if s.origCtx != 0 {
		kv = append(kv, gguf.KV{Key: a + ".rope.scaling.original_context_length", Value: uint32(s.origCtx)})
	}
	if s.attnFactor != 0 {
		kv = append(kv, gguf.KV{Key: a + ".rope.scaling.attn_factor", Value: s.attnFactor})
	}
	if s.experts != 0 {
		kv = append(kv, gguf.KV{Key: a + ".expert_count", Value: uint32(s.experts)})
	}
	if s.used != 0 {
		kv = append(kv, gguf.KV{Key: a + ".expert_used_count", Value: uint32(s.used)})
	}
	if s.expertFFN != 0 {
		kv = append(kv, gguf.KV{Key: a + ".expert_feed_forward_length", Value: uint32(s.expertFFN)})
	}
	if s.window != 0 {
		kv = append(kv, gguf.KV{Key: a + ".attention.sliding_window", Value: uint32(s.window)})
	}
	return append(kv, s.extraKV...)
}

// tensors are the spec's tensors with random weights.
func (s spec) tensors(t testing.TB) []gguf.Tensor {
	t.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 77))
	hd := s.embd / s.heads
	if s.headDim != 0 {
		hd = s.headDim
	}
	qDim, kvDim := s.heads*hd, s.kvHeads*hd
	var tensors []gguf.Tensor
	add := func(name string, typ quant.Type, dims []int64, values []float32) {
		if s.omit[name] {
			return
		}
		if o, ok := s.override[name]; ok {
			tensors = append(tensors, o)
			return
		}
		if ty, ok := s.types[name]; ok {
			typ = ty
		}
		tensors = append(tensors, gguf.Tensor{Name: name, Type: gguf.TensorType(typ), Dims: dims, Data: encode(t, typ, values, int(dims[0]))})
	}
	weight := s.weight
	embdType := s.embdType
	if embdType == 0 {
		embdType = weight
	}
	matrix := func(name string, rows, cols int) {
		add(name, weight, []int64{int64(cols), int64(rows)}, normal(rng, rows*cols, 1/math.Sqrt(float64(cols)), 0))
	}
	vector := func(name string, n int, sd, mean float64) {
		add(name, quant.F32, []int64{int64(n)}, normal(rng, n, sd, mean))
	}
	add("token_embd.weight", embdType, []int64{int64(s.embd), int64(s.vocab)}, normal(rng, s.vocab*s.embd, 1, 0))
	vector("output_norm.weight", s.embd, 0.1, 1)
	if !s.tied {
		matrix("output.weight", s.vocab, s.embd)
	}
	if s.ropeFreqs {
		f := make([]float32, hd/2)
		for i := range f {
			f[i] = 1 + float32(i%3)
		}
		add("rope_freqs.weight", quant.F32, []int64{int64(hd / 2)}, f)
	}
	if s.longRoPE {
		rd := hd
		if s.ropeDims != 0 {
			rd = s.ropeDims
		}
		long, short := make([]float32, rd/2), make([]float32, rd/2)
		for i := range long {
			long[i], short[i] = 1+float32(i)/2, 1+float32(i%2)/4
		}
		add("rope_factors_long.weight", quant.F32, []int64{int64(rd / 2)}, long)
		add("rope_factors_short.weight", quant.F32, []int64{int64(rd / 2)}, short)
	}
	phi3 := s.arch == "phi3"
	for l := range s.layers {
		n := func(f string) string { return fmt.Sprintf(f, l) }
		vector(n("blk.%d.attn_norm.weight"), s.embd, 0.1, 1)
		if phi3 && !s.separateQKV {
			matrix(n("blk.%d.attn_qkv.weight"), qDim+2*kvDim, s.embd)
		} else {
			matrix(n("blk.%d.attn_q.weight"), qDim, s.embd)
			matrix(n("blk.%d.attn_k.weight"), kvDim, s.embd)
			matrix(n("blk.%d.attn_v.weight"), kvDim, s.embd)
		}
		if s.biases {
			vector(n("blk.%d.attn_q.bias"), qDim, 0.5, 0)
			vector(n("blk.%d.attn_k.bias"), kvDim, 0.5, 0)
			vector(n("blk.%d.attn_v.bias"), kvDim, 0.5, 0)
		}
		if s.arch == "qwen3" || s.arch == "qwen3moe" || s.arch == "gemma3" {
			vector(n("blk.%d.attn_q_norm.weight"), hd, 0.1, 1)
			vector(n("blk.%d.attn_k_norm.weight"), hd, 0.1, 1)
		}
		matrix(n("blk.%d.attn_output.weight"), s.embd, qDim)
		if s.arch == "gemma3" {
			vector(n("blk.%d.post_attention_norm.weight"), s.embd, 0.1, 1)
			vector(n("blk.%d.post_ffw_norm.weight"), s.embd, 0.1, 1)
		}
		vector(n("blk.%d.ffn_norm.weight"), s.embd, 0.1, 1)
		if s.arch == "qwen3moe" {
			ne, ff := s.experts, s.expertFFN
			if ff == 0 {
				ff = s.ffn / s.used // llama.cpp's default
			}
			if ff == 0 {
				ff = 32 // a file whose metadata gives no expert width
			}
			// The router stays F32, as llama-quantize leaves it.
			add(n("blk.%d.ffn_gate_inp.weight"), quant.F32, []int64{int64(s.embd), int64(ne)}, normal(rng, ne*s.embd, 1/math.Sqrt(float64(s.embd)), 0))
			experts := func(name string, rows, cols int) {
				add(name, weight, []int64{int64(cols), int64(rows), int64(ne)}, normal(rng, ne*rows*cols, 1/math.Sqrt(float64(cols)), 0))
			}
			experts(n("blk.%d.ffn_gate_exps.weight"), ff, s.embd)
			experts(n("blk.%d.ffn_up_exps.weight"), ff, s.embd)
			experts(n("blk.%d.ffn_down_exps.weight"), s.embd, ff)
			continue
		}
		if phi3 {
			matrix(n("blk.%d.ffn_up.weight"), 2*s.ffn, s.embd) // gate's rows, then up's
		} else {
			matrix(n("blk.%d.ffn_gate.weight"), s.ffn, s.embd)
			matrix(n("blk.%d.ffn_up.weight"), s.ffn, s.embd)
		}
		matrix(n("blk.%d.ffn_down.weight"), s.embd, s.ffn)
	}
	return tensors
}

func normal(rng *rand.Rand, n int, sd, mean float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(mean + sd*rng.NormFloat64())
	}
	return v
}

// encode stores values (rows of rowLen) as typ. Q4_0, which quant has no
// quantizer for, gets a simple absmax encoding.
func encode(t testing.TB, typ quant.Type, values []float32, rowLen int) []byte {
	t.Helper()
	rowSize, err := typ.RowSize(rowLen)
	require.NoError(t, err)
	rows := len(values) / rowLen
	out := make([]byte, rows*rowSize)
	for r := range rows {
		dst, x := out[r*rowSize:(r+1)*rowSize], values[r*rowLen:(r+1)*rowLen]
		if typ == quant.Q4_0 {
			encodeQ4_0(dst, x)
			continue
		}
		require.NoError(t, quant.Quantize(typ, dst, x))
	}
	return out
}

func encodeQ4_0(dst []byte, x []float32) {
	for b := range len(x) / 32 {
		xb, blk := x[32*b:32*b+32], dst[18*b:18*b+18]
		var amax float32
		for _, v := range xb {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 7
		binary.LittleEndian.PutUint16(blk, quant.F32ToF16(d))
		q := func(v float32) byte {
			if d == 0 {
				return 8
			}
			return byte(min(15, max(0, int(math.Round(float64(v/d)))+8)))
		}
		for j := range 16 {
			blk[2+j] = q(xb[j]) | q(xb[j+16])<<4
		}
	}
}

// open loads path with package gguf and package model, closing both when
// the test ends.
func open(t testing.TB, path string, opts Options) *Model {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	m, err := Load(f, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		m.Close()
		f.Close()
	})
	return m
}

// loadErr loads path and returns the load error (nil on success).
func loadErr(t testing.TB, path string) error {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, err := Load(f, Options{Threads: 1})
	if err == nil {
		m.Close()
	}
	return err
}
