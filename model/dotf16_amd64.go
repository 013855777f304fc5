//go:build amd64 && !purego

package model

import "golang.org/x/sys/cpu"

// useF16Asm selects the assembly vector parts of simd.dotF16 and
// simd.reduceVectors (AVX2 and F16C; FMA stands in for F16C, which
// x/sys/cpu does not report).
var useF16Asm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotF16Vecs16(x *byte, y *float32, vecs int, acc *[4][16]float32)

//go:noescape
func dotF16Vecs8(x *byte, y *float32, vecs int, acc *[4][16]float32)

//go:noescape
func reduceAcc16(acc *[4][16]float32) float32

//go:noescape
func reduceAcc8(acc *[4][16]float32) float32

// dotF16Vecs adds the first vecs whole vectors of x·y into acc as
// simd.dotF16's loop does (vector v into acc[v%4]) and returns how many
// elements it took: vecs*lanes, or 0 when the assembly is unavailable.
func dotF16Vecs(lanes int, x []byte, y []float32, vecs int, acc *[4][16]float32) int {
	if !useF16Asm || vecs == 0 {
		return 0
	}
	n := vecs * lanes
	_, _ = x[2*n-1], y[n-1]
	if lanes == 16 {
		dotF16Vecs16(&x[0], &y[0], vecs, acc)
	} else {
		dotF16Vecs8(&x[0], &y[0], vecs, acc)
	}
	return n
}

// reduceAcc is simd.reduceVectors in assembly; ok is false when the
// assembly is unavailable.
func reduceAcc(lanes int, acc *[4][16]float32) (sum float32, ok bool) {
	if !useF16Asm {
		return 0, false
	}
	if lanes == 16 {
		return reduceAcc16(acc), true
	}
	return reduceAcc8(acc), true
}
