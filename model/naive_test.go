package model

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
)

// naiveLogits is an independent float64 forward, written from the
// architecture's definition over fully dequantized weights, returning the
// logits after every token. It rounds keys, values, queries and attention
// probabilities to f16 as the KV cache does, so it differs from the model
// only in activation quantization and accumulation order.
func naiveLogits(t testing.TB, path string, tokens []int32) [][]float64 {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	arch, err := f.String("general.architecture")
	require.NoError(t, err)
	u := func(k string) int {
		v, err := f.Uint32(arch + "." + k)
		require.NoError(t, err)
		return int(v)
	}
	embd, layers, heads, kvHeads := u("embedding_length"), u("block_count"), u("attention.head_count"), u("attention.head_count_kv")
	eps, err := f.Float32(arch + ".attention.layer_norm_rms_epsilon")
	require.NoError(t, err)
	base := 10000.0
	if b, err := f.Float32(arch + ".rope.freq_base"); err == nil {
		base = float64(b)
	}
	hd := embd / heads
	if v, err := f.Uint32(arch + ".attention.key_length"); err == nil {
		hd = int(v)
	}
	group := heads / kvHeads
	rd := hd // rotated values per head
	if v, err := f.Uint32(arch + ".rope.dimension_count"); err == nil {
		rd = int(v)
	}
	attnFactor := 1.0
	if v, err := f.Float32(arch + ".rope.scaling.attn_factor"); err == nil {
		attnFactor = float64(v)
	}
	phi3 := arch == "phi3"
	gemma3 := arch == "gemma3"
	// gemma3's sliding layers: the window, which layers slide (a count or
	// per-layer flags; 6 by default), their RoPE base; the global layers'
	// linear RoPE scaling; the logit softcap.
	window, sliding := 0, make([]bool, layers)
	baseSWA, freqScale, softcapV := 10000.0, 1.0, 0.0
	if v, err := f.Float32(arch + ".rope.scaling.factor"); err == nil && v != 0 {
		freqScale = 1 / float64(v)
	}
	if gemma3 {
		if v, err := f.Uint32(arch + ".attention.sliding_window"); err == nil {
			window = int(v)
		}
		if v, err := f.Float32(arch + ".final_logit_softcapping"); err == nil {
			softcapV = float64(v)
		}
	}
	if window > 0 {
		pattern := 6
		raw, _ := f.Lookup(arch + ".attention.sliding_window_pattern")
		if a, ok := raw.(gguf.Array); ok {
			flags := a.Values.([]bool)
			copy(sliding, flags)
		} else {
			if v, err := f.Uint32(arch + ".attention.sliding_window_pattern"); err == nil {
				pattern = int(v)
			}
			for l := range sliding {
				sliding[l] = pattern == 0 || l%pattern < pattern-1
			}
		}
		if b, err := f.Float32(arch + ".rope.freq_base_swa"); err == nil {
			baseSWA = float64(b)
		}
	}

	// get returns a tensor dequantized as rows, or nil when absent.
	get := func(name string) [][]float64 {
		info, ok := f.Tensor(name)
		if !ok {
			return nil
		}
		data, err := f.TensorData(name)
		require.NoError(t, err)
		cols, rows := int(info.Dims[0]), 1
		for _, d := range info.Dims[1:] {
			rows *= int(d) // a merged expert tensor: every expert's rows in turn
		}
		typ := quant.Type(info.Type)
		rs, err := typ.RowSize(cols)
		require.NoError(t, err)
		out := make([][]float64, rows)
		buf := make([]float32, cols)
		for r := range rows {
			require.NoError(t, quant.Dequantize(typ, buf, data[r*rs:(r+1)*rs]))
			out[r] = make([]float64, cols)
			for i, v := range buf {
				out[r][i] = float64(v)
			}
		}
		return out
	}
	vec := func(name string) []float64 {
		if m := get(name); m != nil {
			return m[0]
		}
		return nil
	}
	f16 := func(x float64) float64 { return float64(quant.F16ToF32(quant.F32ToF16(float32(x)))) }
	mul := func(w [][]float64, x, bias []float64) []float64 {
		y := make([]float64, len(w))
		for r, row := range w {
			for i, v := range row {
				y[r] += v * x[i]
			}
			if bias != nil {
				y[r] += bias[r]
			}
		}
		return y
	}
	norm := func(x, w []float64) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+float64(eps))
		y := make([]float64, len(x))
		for i := range x {
			y[i] = x[i] * s * w[i]
		}
		return y
	}
	factors := vec("rope_freqs.weight")
	if phi3 {
		// LongRoPE: the long factors past the original context (the
		// model's whole context here, padded to 256 as llama.cpp pads it).
		ctx, orig := u("context_length"), u("context_length")
		if v, err := f.Uint32(arch + ".rope.scaling.original_context_length"); err == nil {
			orig = int(v)
		}
		factors = vec("rope_factors_short.weight")
		if (ctx+255)/256*256 > orig {
			factors = vec("rope_factors_long.weight")
		}
	}
	rope := func(x []float64, pos, l int) {
		base, scale := base, freqScale
		if sliding[l] { // gemma3: the sliding layers' own base, never scaled
			base, scale = baseSWA, 1
		}
		for h := 0; h < len(x); h += hd {
			for i := range rd / 2 {
				theta := float64(pos) * math.Pow(base, -2*float64(i)/float64(rd)) * scale
				if factors != nil && !gemma3 {
					theta /= factors[i]
				}
				a, b := h+2*i, h+2*i+1 // llama: adjacent pairs
				if arch == "qwen2" || arch == "qwen3" || arch == "qwen3moe" || phi3 || gemma3 {
					a, b = h+i, h+i+rd/2 // NEOX: half the rotated values apart
				}
				c, s := attnFactor*math.Cos(theta), attnFactor*math.Sin(theta)
				x[a], x[b] = x[a]*c-x[b]*s, x[a]*s+x[b]*c
			}
		}
	}

	embdW := get("token_embd.weight")
	output := get("output.weight")
	if output == nil {
		output = embdW
	}
	type layerW struct {
		attnNorm, ffnNorm, bq, bk, bv []float64
		qNorm, kNorm                  []float64 // qwen3, gemma3
		postAttn, postFFN             []float64 // gemma3
		q, k, v, o, gate, up, down    [][]float64
		qkv                           [][]float64 // phi3's fused Q, K, V rows
		router                        [][]float64 // qwen3moe: [experts][embd]
		gateExps, upExps, downExps    [][]float64 // qwen3moe: every expert's rows in turn
	}
	experts, used := 0, 0
	if arch == "qwen3moe" {
		experts, used = u("expert_count"), u("expert_used_count")
	}
	ls := make([]layerW, layers)
	for l := range ls {
		n := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		ls[l] = layerW{
			attnNorm: vec(n("attn_norm.weight")), ffnNorm: vec(n("ffn_norm.weight")),
			qNorm: vec(n("attn_q_norm.weight")), kNorm: vec(n("attn_k_norm.weight")),
			bq: vec(n("attn_q.bias")), bk: vec(n("attn_k.bias")), bv: vec(n("attn_v.bias")),
			q: get(n("attn_q.weight")), k: get(n("attn_k.weight")), v: get(n("attn_v.weight")),
			o: get(n("attn_output.weight")), gate: get(n("ffn_gate.weight")),
			up: get(n("ffn_up.weight")), down: get(n("ffn_down.weight")),
			qkv:      get(n("attn_qkv.weight")),
			postAttn: vec(n("post_attention_norm.weight")), postFFN: vec(n("post_ffw_norm.weight")),
			router: get(n("ffn_gate_inp.weight")), gateExps: get(n("ffn_gate_exps.weight")),
			upExps: get(n("ffn_up_exps.weight")), downExps: get(n("ffn_down_exps.weight")),
		}
	}

	for l := range ls {
		w := &ls[l]
		if w.qkv != nil { // split phi3's fused tensors
			qd, kvd := heads*hd, kvHeads*hd
			w.q, w.k, w.v = w.qkv[:qd], w.qkv[qd:qd+kvd], w.qkv[qd+kvd:]
		}
		if phi3 {
			ff := len(w.up) / 2
			w.gate, w.up = w.up[:ff], w.up[ff:]
		}
	}

	keys := make([][][]float64, layers) // [layer][pos][kvDim]
	vals := make([][][]float64, layers)
	var out [][]float64
	for pos, tok := range tokens {
		x := append([]float64(nil), embdW[tok]...)
		if gemma3 {
			for i := range x {
				x[i] *= math.Sqrt(float64(embd))
			}
		}
		// The query's scale before its f16 rounding (phi3, gemma3), else
		// the scores'.
		qScale := 1 / math.Sqrt(float64(hd))
		for l, w := range ls {
			xn := norm(x, w.attnNorm)
			q, k, v := mul(w.q, xn, w.bq), mul(w.k, xn, w.bk), mul(w.v, xn, w.bv)
			if w.qNorm != nil {
				for h := 0; h < len(q); h += hd {
					copy(q[h:h+hd], norm(q[h:h+hd], w.qNorm))
				}
				for h := 0; h < len(k); h += hd {
					copy(k[h:h+hd], norm(k[h:h+hd], w.kNorm))
				}
			}
			rope(q, pos, l)
			rope(k, pos, l)
			for i := range k {
				k[i], v[i] = f16(k[i]), f16(v[i])
			}
			keys[l] = append(keys[l], k)
			vals[l] = append(vals[l], v)
			attn := make([]float64, len(q))
			for h := range heads {
				kh := (h / group) * hd
				scores := make([]float64, pos+1)
				maxS := math.Inf(-1)
				for p := range scores {
					if sliding[l] && pos-p >= window {
						scores[p] = math.Inf(-1)
						continue
					}
					if phi3 || gemma3 { // the query scaled before its f16 rounding
						for d := range hd {
							scores[p] += keys[l][p][kh+d] * f16(q[h*hd+d]*qScale)
						}
					} else {
						for d := range hd {
							scores[p] += keys[l][p][kh+d] * f16(q[h*hd+d])
						}
						scores[p] /= math.Sqrt(float64(hd))
					}
					maxS = max(maxS, scores[p])
				}
				var sum float64
				for p := range scores {
					scores[p] = math.Exp(scores[p] - maxS)
					sum += scores[p]
				}
				for p := range scores {
					pr := f16(scores[p] / sum)
					for d := range hd {
						attn[h*hd+d] += pr * vals[l][p][kh+d]
					}
				}
			}
			o := mul(w.o, attn, nil)
			if w.postAttn != nil {
				o = norm(o, w.postAttn)
			}
			for i := range x {
				x[i] += o[i]
			}
			xn = norm(x, w.ffnNorm)
			if w.router != nil {
				// Softmax over the router's logits, the top used experts,
				// their weights normalized to sum to one.
				p := mul(w.router, xn, nil)
				maxP := math.Inf(-1)
				for _, v := range p {
					maxP = max(maxP, v)
				}
				var sum float64
				for e := range p {
					p[e] = math.Exp(p[e] - maxP)
					sum += p[e]
				}
				chosen := make([]int, 0, used)
				var wsum float64
				for range used {
					best := -1
					for e := range p {
						if !slices.Contains(chosen, e) && (best < 0 || p[e] > p[best]) {
							best = e
						}
					}
					chosen = append(chosen, best)
					wsum += p[best] / sum
				}
				ff := len(w.gateExps) / experts
				for _, e := range chosen {
					g := mul(w.gateExps[e*ff:(e+1)*ff], xn, nil)
					up := mul(w.upExps[e*ff:(e+1)*ff], xn, nil)
					for i := range g {
						g[i] = g[i] / (1 + math.Exp(-g[i])) * up[i]
					}
					d := mul(w.downExps[e*embd:(e+1)*embd], g, nil)
					for i := range x {
						x[i] += p[e] / sum / wsum * d[i]
					}
				}
				continue
			}
			g, up := mul(w.gate, xn, nil), mul(w.up, xn, nil)
			for i := range g {
				if gemma3 { // GELU, tanh approximation
					x := g[i]
					g[i] = 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))) * up[i]
					continue
				}
				g[i] = g[i] / (1 + math.Exp(-g[i])) * up[i]
			}
			d := mul(w.down, g, nil)
			if w.postFFN != nil {
				d = norm(d, w.postFFN)
			}
			for i := range x {
				x[i] += d[i]
			}
		}
		logits := mul(output, norm(x, vec("output_norm.weight")), vec("output.bias"))
		if softcapV != 0 {
			for i, v := range logits {
				logits[i] = softcapV * math.Tanh(v/softcapV)
			}
		}
		out = append(out, logits)
	}
	return out
}

// cosine of a model logits vector and a naive one.
func cosine(a []float32, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * b[i]
		na += float64(a[i]) * float64(a[i])
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}
