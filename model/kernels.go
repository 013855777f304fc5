package model

import (
	"github.com/realizar-host/realizar-host/q4k"
)

// TEMPORARY until q4k's dot products land: dequantize-and-multiply.

func hasKernel(t q4k.Type) bool {
	switch t {
	case q4k.F32, q4k.F16, q4k.BF16, q4k.Q4_0, q4k.Q5_0, q4k.Q8_0, q4k.Q4_K, q4k.Q5_K, q4k.Q6_K:
		return true
	}
	return false
}

func encodeActs(t q4k.Type, dst []byte, x []float32) {
	_ = q4k.Quantize(t, dst, x)
}

func dotRows(t q4k.Type, dst []float32, rows []byte, rowSize int, act []byte, n int) {
	w := make([]float32, n)
	a := make([]float32, n)
	_ = q4k.Dequantize(t.VecDotType(), a, act)
	for r := range dst {
		_ = q4k.Dequantize(t, w, rows[r*rowSize:(r+1)*rowSize])
		var s float32
		for i := range n {
			s += w[i] * a[i]
		}
		dst[r] = s
	}
}

func kernelName() string { return "generic" }

func f16FromF32(dst []uint16, src []float32) {
	for i, v := range src {
		dst[i] = q4k.F32ToF16(v)
	}
}

func dotF16(a, b []uint16) float32 {
	var s float32
	for i := range a {
		s += q4k.F16ToF32(a[i]) * q4k.F16ToF32(b[i])
	}
	return s
}
