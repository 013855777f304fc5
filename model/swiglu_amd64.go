//go:build amd64 && !purego

package model

//go:noescape
func swiglu16(h, gate, up *float32, quads int)

// swigluVec computes the first n (a multiple of 4) elements of the 16-lane
// simd.swiglu in assembly and returns how many it did: n, or 0 when the
// assembly is unavailable.
func swigluVec(h, gate, up []float32, n int) int {
	if !useAsm || n < 4 {
		return 0
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
