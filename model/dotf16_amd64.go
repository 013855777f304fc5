//go:build amd64 && !purego

package model

import "golang.org/x/sys/cpu"

// useF16Asm selects the assembly vector part of simd.dotF16 (AVX2 and F16C;
// FMA stands in for F16C, which x/sys/cpu does not report).
var useF16Asm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotF16Groups16(x *byte, y *float32, groups int, acc *[4][16]float32)

//go:noescape
func dotF16Groups8(x *byte, y *float32, groups int, acc *[4][16]float32)

// dotF16Groups adds the first groups*4*lanes elements of x·y into acc as
// simd.dotF16's loop does, and returns how many elements it took (0 when
// the assembly is unavailable).
func dotF16Groups(lanes int, x []byte, y []float32, groups int, acc *[4][16]float32) int {
	if !useF16Asm || groups == 0 {
		return 0
	}
	n := groups * 4 * lanes
	_, _ = x[2*n-1], y[n-1]
	if lanes == 16 {
		dotF16Groups16(&x[0], &y[0], groups, acc)
	} else {
		dotF16Groups8(&x[0], &y[0], groups, acc)
	}
	return n
}
