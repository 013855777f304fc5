package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Dequantize converts a row of len(dst) weights of type t, stored in src, to
// float32, bit for bit as ggml's to_float does. dst is [n]float32 with n a
// multiple of t.BlockSize(); src must hold at least t.RowSize(n) bytes (extra
// bytes are ignored). The activation types Q8_1 and Q8_K are accepted too
// (d*q).
//
// It fails with an error wrapping ErrUnknownType, ErrRowLength or
// ErrShortBuffer; dst is then untouched.
func Dequantize(t Type, dst []float32, src []byte) error {
	switch t {
	case F32:
		return dequantizeF32(dst, src)
	case F16:
		return dequantizeF16(dst, src)
	case BF16:
		return dequantizeBF16(dst, src)
	case Q4_0:
		return dequantizeQ4_0(dst, src)
	case Q4_1:
		return dequantizeQ4_1(dst, src)
	case Q5_0:
		return dequantizeQ5_0(dst, src)
	case Q5_1:
		return dequantizeQ5_1(dst, src)
	case Q8_0:
		return dequantizeQ8_0(dst, src)
	case Q8_1:
		return dequantizeQ8_1(dst, src)
	case Q4_K:
		return dequantizeQ4_K(dst, src)
	case Q5_K:
		return dequantizeQ5_K(dst, src)
	case Q6_K:
		return dequantizeQ6_K(dst, src)
	case Q8_K:
		return dequantizeQ8_K(dst, src)
	}
	return fmt.Errorf("quant: dequantize %v: %w", t, ErrUnknownType)
}

// checkRow validates a row of n weights of type t against a byte buffer of
// have bytes named what, and returns the number of blocks.
func checkRow(t Type, n int, what string, have int) (int, error) {
	size, err := t.RowSize(n)
	if err != nil {
		return 0, err
	}
	if have < size {
		return 0, shortErr(t, n, what, have, size)
	}
	return n / t.BlockSize(), nil
}

func f16At(b []byte, off int) float32 { return F16ToF32(binary.LittleEndian.Uint16(b[off:])) }

// dequantizeF32 copies len(dst) little-endian float32 values from src.
func dequantizeF32(dst []float32, src []byte) error {
	if _, err := checkRow(F32, len(dst), "src", len(src)); err != nil {
		return err
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
	return nil
}

// dequantizeF16 converts len(dst) binary16 values from src.
func dequantizeF16(dst []float32, src []byte) error {
	if _, err := checkRow(F16, len(dst), "src", len(src)); err != nil {
		return err
	}
	for i := range dst {
		dst[i] = f16At(src, 2*i)
	}
	return nil
}

// dequantizeBF16 converts len(dst) bfloat16 values from src.
func dequantizeBF16(dst []float32, src []byte) error {
	if _, err := checkRow(BF16, len(dst), "src", len(src)); err != nil {
		return err
	}
	for i := range dst {
		dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
	return nil
}

// dequantizeQ4_0 decodes len(dst)/32 block_q4_0: w = float(q-8)*d.
func dequantizeQ4_0(dst []float32, src []byte) error {
	nb, err := checkRow(Q4_0, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[18*i : 18*i+18]
		d := f16At(b, 0)
		y := dst[32*i : 32*i+32]
		for j := range 16 {
			y[j] = float32(int(b[2+j]&0x0F)-8) * d
			y[j+16] = float32(int(b[2+j]>>4)-8) * d
		}
	}
	return nil
}

// dequantizeQ5_0 decodes len(dst)/32 block_q5_0: w = float(q-16)*d.
func dequantizeQ5_0(dst []float32, src []byte) error {
	nb, err := checkRow(Q5_0, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[22*i : 22*i+22]
		d := f16At(b, 0)
		qh := binary.LittleEndian.Uint32(b[2:])
		y := dst[32*i : 32*i+32]
		for j := range 16 {
			h0 := int((qh >> j << 4) & 0x10)
			h1 := int((qh >> (j + 12)) & 0x10)
			y[j] = float32((int(b[6+j]&0x0F)|h0)-16) * d
			y[j+16] = float32((int(b[6+j]>>4)|h1)-16) * d
		}
	}
	return nil
}

// dequantizeQ8_0 decodes len(dst)/32 block_q8_0: w = float(q)*d.
func dequantizeQ8_0(dst []float32, src []byte) error {
	nb, err := checkRow(Q8_0, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[34*i : 34*i+34]
		d := f16At(b, 0)
		y := dst[32*i : 32*i+32]
		for j := range 32 {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
	return nil
}

// scaleMinK4 returns the 6-bit scale and min of sub-block j (0..7) from the
// 12 packed bytes q of a Q4_K or Q5_K block.
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return (q[j+4] & 0xF) | ((q[j-4] >> 6) << 4), (q[j+4] >> 4) | ((q[j] >> 6) << 4)
}

// dequantizeQ4_K decodes len(dst)/256 block_q4_K: per sub-block,
// d1 := d*scale, m1 := dmin*min, w = d1*float(q) - m1.
func dequantizeQ4_K(dst []float32, src []byte) error {
	nb, err := checkRow(Q4_K, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[144*i : 144*i+144]
		d, dmin := f16At(b, 0), f16At(b, 2)
		scales, qs := b[4:16], b[16:144]
		y := dst[256*i : 256*i+256]
		for k := range 4 {
			sc, m := scaleMinK4(2*k, scales)
			d1, m1 := float32(d*float32(sc)), float32(dmin*float32(m))
			sc, m = scaleMinK4(2*k+1, scales)
			d2, m2 := float32(d*float32(sc)), float32(dmin*float32(m))
			q := qs[32*k : 32*k+32]
			lo, hi := y[64*k:64*k+32], y[64*k+32:64*k+64]
			for l := range 32 {
				lo[l] = float32(d1*float32(q[l]&0xF)) - m1
				hi[l] = float32(d2*float32(q[l]>>4)) - m2
			}
		}
	}
	return nil
}

// dequantizeQ5_K decodes len(dst)/256 block_q5_K: as Q4_K with the 5th bit
// from qh added as 16.
func dequantizeQ5_K(dst []float32, src []byte) error {
	nb, err := checkRow(Q5_K, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[176*i : 176*i+176]
		d, dmin := f16At(b, 0), f16At(b, 2)
		scales, qh, qs := b[4:16], b[16:48], b[48:176]
		y := dst[256*i : 256*i+256]
		for k := range 4 {
			sc, m := scaleMinK4(2*k, scales)
			d1, m1 := float32(d*float32(sc)), float32(dmin*float32(m))
			sc, m = scaleMinK4(2*k+1, scales)
			d2, m2 := float32(d*float32(sc)), float32(dmin*float32(m))
			u1, u2 := byte(1)<<(2*k), byte(2)<<(2*k)
			q := qs[32*k : 32*k+32]
			lo, hi := y[64*k:64*k+32], y[64*k+32:64*k+64]
			for l := range 32 {
				q1, q2 := int(q[l]&0xF), int(q[l]>>4)
				if qh[l]&u1 != 0 {
					q1 += 16
				}
				if qh[l]&u2 != 0 {
					q2 += 16
				}
				lo[l] = float32(d1*float32(q1)) - m1
				hi[l] = float32(d2*float32(q2)) - m2
			}
		}
	}
	return nil
}

// q6At returns the four 6-bit quants (minus 32) at position l of a 128-weight
// half of a block_q6_K: weights l, l+32, l+64, l+96.
func q6At(ql, qh []byte, l int) (q1, q2, q3, q4 int) {
	h := qh[l]
	q1 = int(ql[l]&0xF|(h&3)<<4) - 32
	q2 = int(ql[l+32]&0xF|((h>>2)&3)<<4) - 32
	q3 = int(ql[l]>>4|((h>>4)&3)<<4) - 32
	q4 = int(ql[l+32]>>4|((h>>6)&3)<<4) - 32
	return
}

// dequantizeQ6_K decodes len(dst)/256 block_q6_K: w = (d*float(scale))*float(q-32).
func dequantizeQ6_K(dst []float32, src []byte) error {
	nb, err := checkRow(Q6_K, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[210*i : 210*i+210]
		d := f16At(b, 208)
		for h := range 2 {
			ql, qh := b[64*h:64*h+64], b[128+32*h:128+32*h+32]
			sc := b[192+8*h : 192+8*h+8]
			y := dst[256*i+128*h : 256*i+128*h+128]
			for l := range 32 {
				is := l / 16
				q1, q2, q3, q4 := q6At(ql, qh, l)
				y[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
				y[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				y[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				y[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
		}
	}
	return nil
}

// dequantizeQ8_K decodes len(dst)/256 block_q8_K: w = d*float(q).
func dequantizeQ8_K(dst []float32, src []byte) error {
	nb, err := checkRow(Q8_K, len(dst), "src", len(src))
	if err != nil {
		return err
	}
	for i := range nb {
		b := src[292*i : 292*i+292]
		d := math.Float32frombits(binary.LittleEndian.Uint32(b))
		y := dst[256*i : 256*i+256]
		for j := range 256 {
			y[j] = d * float32(int8(b[4+j]))
		}
	}
	return nil
}
