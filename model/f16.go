package model

import "math"

// TEMPORARY until q4k lands: IEEE half conversions and the f16 dot product.

func f16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff:
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp > 142:
		return sign | 0x7c00
	case exp < 113:
		if exp < 102 {
			return sign
		}
		man |= 0x800000
		shift := uint(126 - exp)
		half := uint32(1) << (shift - 1)
		r := man >> shift
		rem := man & (1<<shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(exp-112)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++
	}
	return sign | uint16(r)
}

func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(man) / 1024 / 16384
		if sign != 0 {
			return -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

func f16FromF32(dst []uint16, src []float32) {
	for i, v := range src {
		dst[i] = f16Bits(v)
	}
}

func dotF16(a, b []uint16) float32 {
	var s float64
	for i := range a {
		s += float64(f16ToF32(a[i]) * f16ToF32(b[i]))
	}
	return float32(s)
}
