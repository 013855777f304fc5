//go:build !amd64 || purego

package model

// dotF16Groups takes no elements in this build: simd.dotF16's Go loop does
// them all.
func dotF16Groups(int, []byte, []float32, int, *[4][16]float32) int { return 0 }
