//go:build !amd64 || purego

package model

// dotF16Sum is unavailable in this build: simd.dotF16's Go loop runs.
func dotF16Sum(int, []byte, []float32, int) (float32, bool) { return 0, false }

// swigluVec does nothing in this build: simd.swiglu's Go loop runs.
func swigluVec(_, _, _ []float32, _ int) int { return 0 }
