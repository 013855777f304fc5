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
type rope struct {
	kind       RopeType
	dims       int       // rotated values per head (n_rot), even
	freqScale  float32   // 1/linear scaling factor; 1 when unscaled
	thetaScale float32   // base^(-2/dims)
	factors    []float32 // [dims/2] divisors of each pair's angle (Llama 3 rope_freqs), or nil
}

func newRope(kind RopeType, dims int, base, freqScale float32, factors []float32) rope {
	return rope{
		kind:       kind,
		dims:       dims,
		freqScale:  freqScale,
		thetaScale: float32(math.Pow(float64(base), float64(float32(-2)/float32(dims)))),
		factors:    factors,
	}
}

// table fills cs ([dims]float32) with cos and sin of every pair's angle at
// position pos: cs[2i] = cos, cs[2i+1] = sin.
func (r *rope) table(cs []float32, pos int) {
	theta := float32(pos)
	for i := 0; i < r.dims; i += 2 {
		t := theta
		if r.factors != nil {
			t = theta / r.factors[i/2]
		}
		t = r.freqScale * t
		// ggml calls glibc's cosf/sinf, whose roundings sincosf follows.
		cs[i+1], cs[i] = sincosf(t)
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
