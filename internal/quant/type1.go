package quant

import (
	"encoding/binary"
	"math"
)

// The "type 1" formats: 32-weight blocks with a scale and an offset (Q4_1,
// Q5_1), and Q8_1, the activation encoding their dot products consume.
// llama.cpp writes Q5_1 into Q4_K_S files for rows whose length is not a
// multiple of 256.

// dequantizeQ4_1 decodes len(dst)/32 block_q4_1: w = float(q)*d + m.
func dequantizeQ4_1(dst []float32, src []byte) error {
	nb, err := checkRow(Q4_1, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[20*i : 20*i+20]
		d, m := f16At(b, 0), f16At(b, 2)
		y := dst[32*i : 32*i+32]
		for j := range 16 {
			y[j] = float32(float32(b[4+j]&0x0F)*d) + m
			y[j+16] = float32(float32(b[4+j]>>4)*d) + m
		}
	}
	return nil
}

// dequantizeQ5_1 decodes len(dst)/32 block_q5_1: w = float(q)*d + m, q the
// nibble with the 5th bit from qh.
func dequantizeQ5_1(dst []float32, src []byte) error {
	nb, err := checkRow(Q5_1, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[24*i : 24*i+24]
		d, m := f16At(b, 0), f16At(b, 2)
		qh := binary.LittleEndian.Uint32(b[4:])
		y := dst[32*i : 32*i+32]
		for j := range 16 {
			h0 := (qh >> j << 4) & 0x10
			h1 := (qh >> (j + 12)) & 0x10
			y[j] = float32(float32(uint32(b[8+j]&0x0F)|h0)*d) + m
			y[j+16] = float32(float32(uint32(b[8+j]>>4)|h1)*d) + m
		}
	}
	return nil
}

// dequantizeQ8_1 decodes len(dst)/32 block_q8_1: w = float(q)*d (the s field
// is not used).
func dequantizeQ8_1(dst []float32, src []byte) error {
	nb, err := checkRow(Q8_1, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[36*i : 36*i+36]
		d := f16At(b, 0)
		y := dst[32*i : 32*i+32]
		for j := range 32 {
			y[j] = float32(int8(b[4+j])) * d
		}
	}
	return nil
}

// minMax returns the smallest and largest of xb, starting from +MaxFloat32
// and -MaxFloat32 as ggml does (NaNs are skipped by the comparisons).
func minMax(xb []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range xb {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// QuantizeQ4_1 is ggml's quantize_row_q4_1_ref: d = (max-min)/15, m = min,
// q = min(15, trunc((x-min)/d + 0.5)) with the reciprocal 1/d.
func QuantizeQ4_1(dst []byte, x []float32) error {
	nb, err := checkRow(Q4_1, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	for i := range nb {
		xb, b := x[32*i:32*i+32], dst[20*i:20*i+20]
		lo, hi := minMax(xb)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		putF16(b[2:], lo)
		for j := range 16 {
			x0, x1 := float32((xb[j]-lo)*id), float32((xb[j+16]-lo)*id)
			q0 := min(15, int(int8(int32(x0+0.5))))
			q1 := min(15, int(int8(int32(x1+0.5))))
			b[4+j] = byte(q0) | byte(q1)<<4
		}
	}
	return nil
}

// QuantizeQ5_1 is ggml's quantize_row_q5_1_ref: d = (max-min)/31, m = min,
// q = trunc((x-min)/d + 0.5) with the reciprocal 1/d (not clamped, as in
// ggml: (x-min)/d never exceeds 31.5 for finite input).
func QuantizeQ5_1(dst []byte, x []float32) error {
	nb, err := checkRow(Q5_1, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	for i := range nb {
		xb, b := x[32*i:32*i+32], dst[24*i:24*i+24]
		lo, hi := minMax(xb)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		putF16(b[2:], lo)
		var qh uint32
		for j := range 16 {
			x0, x1 := float32((xb[j]-lo)*id), float32((xb[j+16]-lo)*id)
			q0 := uint32(uint8(int32(x0 + 0.5)))
			q1 := uint32(uint8(int32(x1 + 0.5)))
			b[8+j] = byte(q0&0x0F | (q1&0x0F)<<4)
			qh |= (q0 & 0x10) >> 4 << j
			qh |= (q1 & 0x10) >> 4 << (j + 16)
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
	}
	return nil
}

// QuantizeQ8_1 is ggml's quantize_row_q8_1_ref: d = amax/127, q =
// round-half-away(x/d) with the reciprocal 1/d, s = float(Σq)*d. (The
// activation encoder ggml's x86 backend uses rounds half to even; see
// QuantizeActivation.)
func QuantizeQ8_1(dst []byte, x []float32) error {
	nb, err := checkRow(Q8_1, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	for i := range nb {
		xb, b := x[32*i:32*i+32], dst[36*i:36*i+36]
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
		sum := 0
		for j, v := range xb {
			q := int8(math.Round(float64(float32(v * id))))
			b[4+j] = byte(q)
			sum += int(q)
		}
		putF16(b[2:], float32(float32(sum)*d))
	}
	return nil
}

// quantizeActQ8_1 is ggml's x86 quantize_row_q8_1 over whole blocks: as
// quantizeActQ8_0 (d = amax/127, q = round-half-even(x*(127/amax))), plus
// s = d*float(Σq).
func quantizeActQ8_1(dst []byte, x []float32) {
	for i := range len(x) / 32 {
		xb, b := x[32*i:32*i+32], dst[36*i:36*i+36]
		var amax float32
		for _, v := range xb {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		putF16(b, d)
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		var sum int32
		for j, v := range xb {
			q := int32(math.RoundToEven(float64(float32(v * id))))
			sum += q
			b[4+j] = byte(int8(max(-128, min(127, q))))
		}
		putF16(b[2:], float32(d*float32(sum)))
	}
}

// dotQ4_1Ref: per block sum += (dw*da)*float32(sumi) + mw*sa, where sa is the
// activation block's s (da times the sum of its quants).
func dotQ4_1Ref(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		wb, ab := w[20*i:20*i+20], a[36*i:36*i+36]
		var sumi int32
		for j := range 16 {
			sumi += int32(wb[4+j]&0x0F) * int32(int8(ab[4+j]))
			sumi += int32(wb[4+j]>>4) * int32(int8(ab[20+j]))
		}
		sum += float32(float32(float32(f16At(wb, 0)*f16At(ab, 0))*float32(sumi)) + float32(f16At(wb, 2)*f16At(ab, 2)))
	}
	return sum
}

// dotQ5_1Ref: as dotQ4_1Ref with 5-bit quants.
func dotQ5_1Ref(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		wb, ab := w[24*i:24*i+24], a[36*i:36*i+36]
		qh := binary.LittleEndian.Uint32(wb[4:])
		var sumi int32
		for j := range 16 {
			h0 := int32((qh >> j << 4) & 0x10)
			h1 := int32((qh >> (j + 12)) & 0x10)
			sumi += (int32(wb[8+j]&0x0F) | h0) * int32(int8(ab[4+j]))
			sumi += (int32(wb[8+j]>>4) | h1) * int32(int8(ab[20+j]))
		}
		sum += float32(float32(float32(f16At(wb, 0)*f16At(ab, 0))*float32(sumi)) + float32(f16At(wb, 2)*f16At(ab, 2)))
	}
	return sum
}
