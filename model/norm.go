package model

import "math"

// rmsNorm writes y[i] = x[i] / sqrt(mean(x²) + eps) * w[i] for x, y, w of
// the same length (y may alias x). As in ggml, the sum of squares is
// accumulated in float64 and the scale applied in f32.
func rmsNorm(y, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(float32(v * v))
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	for i, v := range x {
		y[i] = float32(v*scale) * w[i]
	}
}

// headNorm RMS-normalizes each len(w)-wide head of x in place and scales
// it by w, as ggml_rms_norm over a [head_dim, heads, tokens] view followed
// by ggml_mul does (qwen3's attn_q_norm and attn_k_norm).
func headNorm(x, w []float32, eps float32) {
	hd := len(w)
	for off := 0; off+hd <= len(x); off += hd {
		h := x[off : off+hd]
		rmsNorm(h, h, w, eps)
	}
}

// addTo adds src into dst element-wise (the residual connection).
func addTo(dst, src []float32) {
	for i, v := range src {
		dst[i] += v
	}
}
