package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Quantize encodes the row x as type t into dst with ggml's reference
// quantizer for t (quantize_row_*_ref, the code llama.cpp's file quantizer
// runs when no importance matrix is given), bit for bit. dst must hold
// t.RowSize(len(x)) bytes; bytes beyond that are left alone.
//
// Every known type has a quantizer. It fails with an error wrapping
// ErrUnknownType, ErrRowLength or ErrShortBuffer.
func Quantize(t Type, dst []byte, x []float32) error {
	switch t {
	case F32:
		return quantizeF32(dst, x)
	case F16:
		return QuantizeF16(dst, x)
	case BF16:
		return QuantizeBF16(dst, x)
	case Q4_0:
		return QuantizeQ4_0(dst, x)
	case Q4_1:
		return QuantizeQ4_1(dst, x)
	case Q5_0:
		return QuantizeQ5_0(dst, x)
	case Q5_1:
		return QuantizeQ5_1(dst, x)
	case Q8_0:
		return QuantizeQ8_0(dst, x)
	case Q8_1:
		return QuantizeQ8_1(dst, x)
	case Q4_K:
		return QuantizeQ4_K(dst, x)
	case Q5_K:
		return QuantizeQ5_K(dst, x)
	case Q6_K:
		return QuantizeQ6_K(dst, x)
	case Q8_K:
		return QuantizeQ8_K(dst, x)
	}
	return fmt.Errorf("quant: quantize %v: %w", t, ErrUnknownType)
}

// nearestInt rounds f to the nearest integer, ties to even, with ggml's
// trick: adding 1.5*2^23 leaves the integer in the low mantissa bits. It is
// exact for |f| <= 4194303; beyond that the result is meaningless, as in ggml.
func nearestInt(f float32) int {
	val := f + 12582912
	i := int32(math.Float32bits(val))
	return int((i & 0x007fffff) - 0x00400000)
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ 0x80000000) }

func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, F32ToF16(f)) }

// quantizeF32 stores x as little-endian float32.
func quantizeF32(dst []byte, x []float32) error {
	if _, err := checkRow(F32, len(x), "dst", len(dst)); err != nil {
		return err
	}
	for i, v := range x {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
	return nil
}

// QuantizeF16 stores x as binary16: F32ToF16Slice after checking dst's
// length (F32ToF16's bits; a NaN stays a NaN of its sign).
func QuantizeF16(dst []byte, x []float32) error {
	if _, err := checkRow(F16, len(x), "dst", len(dst)); err != nil {
		return err
	}
	F32ToF16Slice(dst, x)
	return nil
}

// QuantizeBF16 stores x as bfloat16 (see F32ToBF16).
func QuantizeBF16(dst []byte, x []float32) error {
	if _, err := checkRow(BF16, len(x), "dst", len(dst)); err != nil {
		return err
	}
	for i, v := range x {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(v))
	}
	return nil
}

// QuantizeQ8_0 is ggml's quantize_row_q8_0_ref: d = amax/127, q =
// round-half-away(x/d) with the reciprocal 1/d. (The activation encoder
// ggml's x86 backend uses differs; see QuantizeActivation.)
func QuantizeQ8_0(dst []byte, x []float32) error {
	nb, err := checkRow(Q8_0, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	for i := range nb {
		xb, b := x[32*i:32*i+32], dst[34*i:34*i+34]
		var amax float32
		for _, v := range xb {
			if a := abs32(v); a > amax {
				amax = a
			}
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		for j, v := range xb {
			b[2+j] = byte(int8(math.Round(float64(float32(v * id)))))
		}
	}
	return nil
}

// QuantizeQ4_0 is ggml's quantize_row_q4_0_ref: d = max/-8 where max is the
// first value of largest magnitude, q = min(15, trunc(x/d + 8.5)).
func QuantizeQ4_0(dst []byte, x []float32) error {
	nb, err := checkRow(Q4_0, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	for i := range nb {
		xb, b := x[32*i:32*i+32], dst[18*i:18*i+18]
		var amax, max float32
		for _, v := range xb {
			if a := abs32(v); amax < a {
				amax, max = a, v
			}
		}
		d := max / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		for j := range 16 {
			x0, x1 := float32(xb[j]*id), float32(xb[j+16]*id)
			q0 := min(15, int(int8(x0+8.5)))
			q1 := min(15, int(int8(x1+8.5)))
			b[2+j] = byte(q0 | q1<<4)
		}
	}
	return nil
}

// QuantizeQ5_0 is ggml's quantize_row_q5_0_ref: d = max/-16 where max is the
// first value of largest magnitude, q = min(31, trunc(x/d + 16.5)).
func QuantizeQ5_0(dst []byte, x []float32) error {
	nb, err := checkRow(Q5_0, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	for i := range nb {
		xb, b := x[32*i:32*i+32], dst[22*i:22*i+22]
		var amax, max float32
		for _, v := range xb {
			if a := abs32(v); amax < a {
				amax, max = a, v
			}
		}
		d := max / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		var qh uint32
		for j := range 16 {
			x0, x1 := float32(xb[j]*id), float32(xb[j+16]*id)
			q0 := min(31, int(int8(x0+16.5)))
			q1 := min(31, int(int8(x1+16.5)))
			b[6+j] = byte(q0&0x0F | (q1&0x0F)<<4)
			qh |= uint32(q0&0x10) >> 4 << j
			qh |= uint32(q1&0x10) >> 4 << (j + 16)
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
	}
	return nil
}

// QuantizeQ8_K is ggml's quantize_row_q8_K_ref, the activation encoder of
// K-quant dot products: d = max/-127 stored as f32 (max the first value of
// largest magnitude), q = min(127, nearest(x*(-127/max))), bsums the sums of
// each 16 quants. An all-zero block gets d = 0 and zero quants and bsums
// (ggml leaves its bsums unwritten).
func QuantizeQ8_K(dst []byte, x []float32) error {
	nb, err := checkRow(Q8_K, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	quantizeQ8K(dst[:nb*292], x[:nb*256])
	return nil
}

// quantizeQ8KRef is the reference loop for QuantizeQ8_K over whole blocks;
// len(x) = 256*nb, len(dst) = 292*nb.
func quantizeQ8KRef(dst []byte, x []float32) {
	for i := range len(x) / 256 {
		xb, b := x[256*i:256*i+256], dst[292*i:292*i+292]
		var amax, max float32
		for _, v := range xb {
			if a := abs32(v); a > amax {
				amax, max = a, v
			}
		}
		if amax == 0 {
			clear(b)
			continue
		}
		iscale := -127 / max
		for j, v := range xb {
			b[4+j] = byte(int8(min(127, nearestInt(float32(iscale*v)))))
		}
		for j := range 16 {
			sum := 0
			for _, q := range b[4+16*j : 4+16*j+16] {
				sum += int(int8(q))
			}
			binary.LittleEndian.PutUint16(b[260+2*j:], uint16(int16(sum)))
		}
		binary.LittleEndian.PutUint32(b, math.Float32bits(1/iscale))
	}
}
