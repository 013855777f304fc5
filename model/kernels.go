package model

import (
	"encoding/binary"
	"math"

	"github.com/realizar-host/realizar-host/q4k"
)

// TEMPORARY until q4k's dot products land: F32 only, dequantize elsewhere.

func hasKernel(t q4k.Type) bool {
	switch t {
	case q4k.F32, q4k.F16, q4k.BF16, q4k.Q4_0, q4k.Q5_0, q4k.Q8_0, q4k.Q4_K, q4k.Q5_K, q4k.Q6_K:
		return true
	}
	return false
}

func encodeActs(t q4k.Type, dst []byte, x []float32) {
	for i, v := range x {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func dotRows(t q4k.Type, dst []float32, rows []byte, rowSize int, act []byte, n int) {
	w := make([]float32, n)
	for r := range dst {
		_ = dequantRow(t, w, rows[r*rowSize:(r+1)*rowSize])
		var s float32
		for i := range n {
			s += w[i] * math.Float32frombits(binary.LittleEndian.Uint32(act[4*i:]))
		}
		dst[r] = s
	}
}

func kernelName() string { return "generic" }

func dequantRow(t q4k.Type, dst []float32, src []byte) error {
	switch t {
	case q4k.F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case q4k.F16:
		for i := range dst {
			dst[i] = f16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	default:
		return ErrUnsupportedType
	}
	return nil
}
