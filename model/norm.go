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

// addTo adds src into dst element-wise (the residual connection).
func addTo(dst, src []float32) {
	for i, v := range src {
		dst[i] += v
	}
}
