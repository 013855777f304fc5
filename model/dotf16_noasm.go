//go:build !amd64 || purego

package model

// dotF16Sum is unavailable in this build: simd.dotF16's Go loop runs.
func dotF16Sum(int, []byte, []float32, int) (float32, bool) { return 0, false }

// dotF16Rows does nothing in this build: the caller loops over dotF16.
func dotF16Rows(int, []float32, []byte, int, []float32, int, int, *f16Pad) bool { return false }

// swigluVec does nothing in this build: simd.swiglu's Go loop runs.
func swigluVec(_, _, _ []float32, _ int) int { return 0 }

// swigluVec8 does nothing in this build: simd.swiglu's Go loop runs.
func swigluVec8(_, _, _ []float32, _ int) int { return 0 }
