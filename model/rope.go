package model

import "math"

// RopeType is how rotary embeddings pair the values of a head.
type RopeType uint8

const (
	// RopeNorm rotates adjacent pairs (x[2i], x[2i+1]): llama.
	RopeNorm RopeType = iota
	// RopeNeox rotates pairs half a rotation apart (x[i], x[i+dims/2]):
	// qwen2 (GPT-NeoX style).
	RopeNeox
)

// String returns "norm" or "neox".
func (t RopeType) String() string {
	switch t {
	case RopeNorm:
		return "norm"
	case RopeNeox:
		return "neox"
	}
	return "invalid"
}

// rope applies rotary position embeddings to heads of dims values.
//
// Pair i (0 <= i < dims/2) turns by angle p * base^(-2i/dims) / factor[i] *
// freqScale at position p. As in ggml, the per-pair angle is computed by
// repeated f32 multiplication by base^(-2/dims), not by a power per pair, so
// the angles round as llama.cpp's do.
//
// Under YaRN (yarn set) pair i's angle mixes the interpolated angle (times
// freqScale) with the original one by ramp(i), 1 below the correction dims
// corr[0] and 0 above corr[1]; every cos and sin is multiplied by mscale
// (ggml's attn_factor), under YaRN by mscale·(1 + 0.1·ln(1/freqScale)).
type rope struct {
	kind       RopeType
	dims       int       // rotated values per head (n_rot), even
	freqScale  float32   // 1/scaling factor; 1 when unscaled
	thetaScale float32   // base^(-2/dims)
	factors    []float32 // [dims/2] divisors of each pair's angle (Llama 3 rope_freqs), or nil
	mscale     float32   // attn_factor: cos and sin are multiplied by it
	yarn       bool
	yarnScale  float32    // mscale·(1 + 0.1·ln(1/freqScale)): the YaRN pairs' multiplier
	corr       [2]float32 // YaRN's correction dims (ggml_rope_yarn_corr_dims)
}

// ropeParams are a model's RoPE hyperparameters (Config's Rope fields).
type ropeParams struct {
	kind       RopeType
	dims       int
	base       float32
	freqScale  float32
	attnFactor float32
	yarn       bool
	origCtx    int // n_ctx_orig, for the correction dims
}

// YaRN's beta_fast and beta_slow: llama.cpp's defaults, which it reads
// from no GGUF key.
const yarnBetaFast, yarnBetaSlow = 32, 1

func newRope(p ropeParams, factors []float32) rope {
	r := rope{
		kind:       p.kind,
		dims:       p.dims,
		freqScale:  p.freqScale,
		thetaScale: float32(math.Pow(float64(p.base), float64(float32(-2)/float32(p.dims)))),
		factors:    factors,
		mscale:     p.attnFactor,
		yarn:       p.yarn,
	}
	if p.yarn {
		// ggml's rope_yarn: mscale *= 1 + 0.1*logf(1/freq_scale), the
		// sum fused (ggml's CPU build contracts it).
		r.yarnScale = float32(r.mscale * fma32(0.1, logf(1/p.freqScale), 1))
		r.corr = yarnCorrDims(p.dims, p.origCtx, p.base)
	}
	return r
}

// yarnCorrDims is ggml_rope_yarn_corr_dims: the pairs between which YaRN's
// ramp falls from extrapolation to interpolation, floor(corr(beta_fast))
// and ceil(corr(beta_slow)) clamped to [0, dims-1], where corr(b) =
// dims·ln(n_ctx_orig/(b·2π)) / (2·ln base), each float32 step rounded.
func yarnCorrDims(dims, origCtx int, base float32) [2]float32 {
	corr := func(beta float32) float32 {
		turn := float32(float32(beta*2) * float32(math.Pi))
		num := float32(float32(dims) * logf(float32(origCtx)/turn))
		return num / float32(2*logf(base))
	}
	start := float32(math.Floor(float64(corr(yarnBetaFast))))
	end := float32(math.Ceil(float64(corr(yarnBetaSlow))))
	return [2]float32{max(0, start), min(float32(dims-1), end)}
}

// ramp is ggml's rope_yarn_ramp for pair i (values 2i, 2i+1): 1 - clamp((i
// - corr[0]) / max(0.001, corr[1]-corr[0]), 0, 1).
func (r *rope) ramp(i int) float32 {
	y := (float32(i) - r.corr[0]) / max(0.001, r.corr[1]-r.corr[0])
	return 1 - min(1, max(0, y))
}

// table fills cs ([dims]float32) with cos and sin of every pair's angle at
// position pos: cs[2i] = cos, cs[2i+1] = sin.
func (r *rope) table(cs []float32, pos int) {
	theta := float32(pos)
	for i := 0; i < r.dims; i += 2 {
		extrap := theta
		if r.factors != nil {
			extrap = theta / r.factors[i/2]
		}
		t := r.freqScale * extrap
		ms := r.mscale
		if r.yarn {
			// ggml's rope_yarn with ext_factor 1, the first product fused
			// into the sum as its CPU build compiles it.
			mix := r.ramp(i / 2)
			t = fma32(t, 1-mix, float32(extrap*mix))
			ms = r.yarnScale
		}
		// ggml calls glibc's cosf/sinf, whose roundings sincosf follows.
		s, c := sincosf(t)
		cs[i], cs[i+1] = c*ms, s*ms
		theta *= r.thetaScale
	}
}

// apply rotates every head of x ([heads*headDim]float32, heads laid out one
// after another) in place with the angles of cs (from table). Values past
// dims in a head are left as they are.
func (r *rope) apply(x []float32, headDim int, cs []float32) {
	half := r.dims / 2
	for h := 0; h+headDim <= len(x); h += headDim {
		head := x[h : h+r.dims]
		if r.kind == RopeNorm && ropeNormVec(head, cs, r.dims) {
			continue
		}
		for i := 0; i < r.dims; i += 2 {
			a, b := i, i+1 // RopeNorm: adjacent values
			if r.kind == RopeNeox {
				a, b = i/2, i/2+half
			}
			c, s := cs[i], cs[i+1]
			x0, x1 := head[a], head[b]
			// As ggml's x86 builds compile it: the x1 product rounded,
			// the x0 product fused into the sum.
			head[a] = fma32(x0, c, -(x1 * s))
			head[b] = fma32(x0, s, x1*c)
		}
	}
}
