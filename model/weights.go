package model

import "github.com/realizar-host/realizar-host/internal/quant"

// Weight is one weight matrix as the forward uses it: y = W·x (+ Bias),
// W of Rows×Cols values of ggml type Type.
type Weight struct {
	Name string     // GGUF tensor name, e.g. "blk.0.attn_q.weight"
	Type quant.Type // the tensor's recorded ggml type
	Rows int        // output width (GGUF ne[1])
	Cols int        // input width, the row length (GGUF ne[0])
	// Data is Rows rows of RowSize(Cols) bytes each: a view of the GGUF
	// file's mapping. The caller must not modify it.
	Data []byte
	// Bias is [Rows]float32, or nil when the file has none. Read-only.
	Bias []float32
}

// LayerWeights is one transformer block's weights.
type LayerWeights struct {
	AttnNorm   []float32 // [Embd] attn_norm gains
	Q, K, V, O Weight    // attention projections (Q, K, V may carry biases: qwen2)
	// QKV is phi3's fused attn_qkv (QDim+2·KVDim rows: Q's, then K's, then
	// V's); Q, K and V are then zero. Zero when they are separate.
	QKV          Weight
	QNorm, KNorm []float32 // [HeadDim] per-head Q/K RMSNorm gains (qwen3), else nil
	FFNNorm      []float32 // [Embd] ffn_norm gains
	// AttnPostNorm and FFNPostNorm are gemma3's post_attention_norm and
	// post_ffw_norm gains ([Embd]: each sublayer's output is RMS-normalized
	// by them before the residual add), else nil.
	AttnPostNorm, FFNPostNorm []float32
	Gate, Up, Down            Weight // SwiGLU (gemma3: GELU) feed-forward; zero in a MoE layer (FusedFFN: Up is 2·FFN rows, gate's first, Gate zero)
	// Router is ffn_gate_inp ([Experts rows × Embd]) in a MoE layer. The
	// merged expert tensors are one Weight each, expert e's rows following
	// expert e-1's: GateExps and UpExps Experts·ExpertFFN rows × Embd,
	// DownExps Experts·Embd rows × ExpertFFN. All zero in a dense layer.
	Router, GateExps, UpExps, DownExps Weight
}

// Weights is every tensor of a Model, for other backends (cuda/) that run
// the same forward on other hardware.
type Weights struct {
	Embd    Weight // token_embd.weight, [Vocab rows × Embd]
	Layers  []LayerWeights
	OutNorm []float32 // [Embd] output_norm gains
	// Output is output.weight, or token_embd.weight again when the output
	// head is tied (TiedOutput); its Bias is output.bias or nil.
	Output Weight
	// RopeFactors is [RopeDims/2] divisors of each pair's angle
	// (rope_freqs.weight, or phi3's LongRoPE factors: Model.RopeFactors
	// names the tensor), or nil.
	RopeFactors []float32
}

// Weights returns views of the model's tensors. Everything in it is
// read-only and valid while the Model and its GGUF file are open.
func (m *Model) Weights() Weights {
	w := Weights{
		Embd:        m.embd.export(),
		OutNorm:     m.outNorm,
		Output:      m.output.export(),
		RopeFactors: m.rope.factors,
		Layers:      make([]LayerWeights, len(m.layers)),
	}
	for i, l := range m.layers {
		w.Layers[i] = LayerWeights{
			AttnNorm: l.attnNorm, FFNNorm: l.ffnNorm, QNorm: l.qNorm, KNorm: l.kNorm,
			AttnPostNorm: l.attnPostNorm, FFNPostNorm: l.ffnPostNorm,
			Q: l.q.export(), K: l.k.export(), V: l.v.export(), O: l.o.export(), QKV: l.qkv.export(),
			Gate: l.gate.export(), Up: l.up.export(), Down: l.down.export(),
		}
		if l.moe != nil {
			lw := &w.Layers[i]
			lw.Router, lw.GateExps = l.moe.router.export(), l.moe.gateExps.export()
			lw.UpExps, lw.DownExps = l.moe.upExps.export(), l.moe.downExps.export()
		}
	}
	return w
}

func (l *linear) export() Weight {
	return Weight{Name: l.name, Type: l.typ, Rows: l.rows, Cols: l.cols, Data: l.data, Bias: l.bias}
}

// RopeAngles is how the CPU forward computes the cos and sin of RoPE pair
// p (0 <= p < Dims/2) at position pos, for other backends: with theta =
// pos·ThetaScale^p (the power by repeated f32 multiplication) divided by
// Factors[p] when Factors is not nil, the angle is FreqScale·theta; under
// YaRN it is mixed with theta itself, FreqScale·theta·(1-r) + theta·r with
// r = 1 - clamp((p - CorrDims[0]) / max(0.001, CorrDims[1]-CorrDims[0]),
// 0, 1) (the first product fused into the sum); cos and sin are then
// multiplied by MScale.
type RopeAngles struct {
	Dims       int       // values rotated per head (rope.dimension_count), even
	ThetaScale float32   // base^(-2/Dims), in f32
	FreqScale  float32   // 1/scaling factor; 1 when unscaled
	Factors    []float32 // [Dims/2] divisors of each pair's theta, or nil. Read-only.
	// MScale is attn_factor; under YaRN attn_factor·(1 + 0.1·ln(1/FreqScale)).
	MScale   float32
	YaRN     bool
	CorrDims [2]float32 // YaRN's correction dims (ggml_rope_yarn_corr_dims)
}

// RopeAngles returns the RoPE of the model's layers, or with sliding that
// of its sliding-window layers (gemma3's own base and scale; the same as
// the others' in a model without such layers).
func (m *Model) RopeAngles(sliding bool) RopeAngles {
	r := &m.rope
	if sliding && m.cfg.SlidingLayers != nil {
		r = &m.ropeSWA
	}
	a := RopeAngles{Dims: r.dims, ThetaScale: r.thetaScale, FreqScale: r.freqScale, Factors: r.factors,
		MScale: r.mscale, YaRN: r.yarn, CorrDims: r.corr}
	if r.yarn {
		a.MScale = r.yarnScale
	}
	return a
}
