//go:build !amd64 || purego

package model

// dotF16Sum is unavailable in this build: simd.dotF16's Go loop runs.
func dotF16Sum(int, []byte, []float32, int) (float32, bool) { return 0, false }
