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

// expSumVec8 does nothing in this build: simd.softmax's Go loop runs.
func expSumVec8(_ []float32, _ float32) (int, float64) { return 0, 0 }

// probsVec does nothing in this build: simd.probs's Go loops run.
func probsVec(_ []float32, _ float32) bool { return false }

// roundF16Vec does nothing in this build: roundF16s's loop runs.
func roundF16Vec(_ []float32) int { return 0 }

// dotF16RowsBatchAsm does nothing in this build: simd.dotF16RowsBatch's Go
// loop runs.
func dotF16RowsBatchAsm(int, []float32, []byte, int, []float32, int, *f16Pad) bool { return false }

// dotF16RowsQ is unavailable in this build: attention takes a head at a
// time.
func dotF16RowsQ([]float32, int, []byte, int, int, []float32, int, []int32) bool { return false }

// useRowsQ16 is false in this build: dotF16RowsQ has no assembly.
const useRowsQ16 = false

// ropeNormVec does nothing in this build: rope.apply's Go loop runs.
func ropeNormVec(_, _ []float32, _ int) bool { return false }
