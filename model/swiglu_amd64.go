//go:build amd64 && !purego

package model

import "golang.org/x/sys/cpu"

//go:noescape
func swiglu16(h, gate, up *float32, quads int)

//go:noescape
func swigluZ(h, gate, up *float32, vecs int)

// swigluVec computes the first n (a multiple of 4) elements of the 16-lane
// simd.swiglu in assembly and returns how many it did: n, or 0 when the
// assembly is unavailable. With AVX-512F it takes n's whole vectors of 16
// in 512-bit registers (swigluZ, ggml's own instructions) and leaves the
// rest to the caller; without, four elements at a time with float64 fused
// multiply-adds (swiglu16, fma32's arithmetic).
func swigluVec(h, gate, up []float32, n int) int {
	if !useAsm || n < 4 {
		return 0
	}
	if hasAVX512F {
		n &^= 15
		if n > 0 {
			_, _, _ = h[n-1], gate[n-1], up[n-1]
			swigluZ(&h[0], &gate[0], &up[0], n/16)
		}
		return n
	}
	n &^= 3
	_, _, _ = h[n-1], gate[n-1], up[n-1]
	swiglu16(&h[0], &gate[0], &up[0], n/4)
	return n
}

//go:noescape
func swiglu8(h, gate, up *float32, octs int)

// swigluVec8 is swigluVec for the 8-lane (AVX2) simd.swiglu: the first n
// (a multiple of 8) elements, in f32 lanes with hardware FMA.
func swigluVec8(h, gate, up []float32, n int) int {
	if !useAsm || n < 8 {
		return 0
	}
	n &^= 7
	_, _, _ = h[n-1], gate[n-1], up[n-1]
	swiglu8(&h[0], &gate[0], &up[0], n/8)
	return n
}

//go:noescape
func expSum8(w *float32, octs int, maxW float32) float64

// expSumVec8 runs the 8-lane simd.softmax's exponentials over the first
// len(w) rounded down to 8 values in assembly: w[i] = expf(w[i] - maxW)
// and the float64 sum of the vectors' horizontal sums. It returns how many
// values it did (0 when the assembly is unavailable) and the sum.
func expSumVec8(w []float32, maxW float32) (int, float64) {
	n := len(w) &^ 7
	if !useAsm || n == 0 {
		return 0, 0
	}
	return n, expSum8(&w[0], n/8, maxW)
}

//go:noescape
func roundF16x8(p *float32, octs int)

// roundF16Vec rounds the first len(p) rounded down to 8 values to f16
// precision in place (roundF16's bits for every non-NaN value) and
// returns how many it did (0 when the assembly is unavailable).
func roundF16Vec(p []float32) int {
	n := len(p) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	roundF16x8(&p[0], n/8)
	return n
}

//go:noescape
func softmaxF16x16(w *float32, n int, scale float32)

// hasAVX512F is whether the CPU runs the 512-bit kernels (probsVec).
var hasAVX512F = cpu.X86.HasAVX512F

// probsVec is the 16-lane simd.probs in assembly (AVX-512F): ok is false
// where it is unavailable, and then w is untouched.
func probsVec(w []float32, scale float32) (ok bool) {
	if !useAsm || !hasAVX512F || len(w) == 0 {
		return false
	}
	softmaxF16x16(&w[0], len(w), scale)
	return true
}

//go:noescape
func ropeNormZ(x, cs *float32, vecs int)

// ropeNormVec rotates the first dims values (a multiple of 16) of a head
// by RopeNorm's pairs in 512-bit registers (AVX-512F): ok is false where
// that is unavailable, and then head is untouched.
func ropeNormVec(head, cs []float32, dims int) (ok bool) {
	if !useAsm || !hasAVX512F || dims%16 != 0 || dims == 0 {
		return false
	}
	_, _ = head[dims-1], cs[dims-1]
	ropeNormZ(&head[0], &cs[0], dims/16)
	return true
}
