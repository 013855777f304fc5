//go:build !amd64 || purego

package model

// dotF16Vecs takes no elements in this build: simd.dotF16's Go loop does
// them all.
func dotF16Vecs(int, []byte, []float32, int, *[4][16]float32) int { return 0 }

// reduceAcc is unavailable in this build: simd.reduceVectors' Go code runs.
func reduceAcc(int, *[4][16]float32) (float32, bool) { return 0, false }
