package quant

import (
	"encoding/binary"
	"math"
)

// F16ToF32 converts an IEEE binary16 value (given as its bits) to float32.
// The conversion is exact; it follows ggml's bit-level algorithm, so NaN
// payloads come out as ggml's do.
func F16ToF32(h uint16) float32 {
	w := uint32(h) << 16
	sign := w & 0x80000000
	twoW := w + w

	const expOffset = 0xE0 << 23
	expScale := math.Float32frombits(0x07800000) // 2^-112
	normalized := float32(math.Float32frombits((twoW>>4)+expOffset) * expScale)

	const magicMask = 126 << 23
	denormalized := math.Float32frombits((twoW>>17)|magicMask) - 0.5

	const denormalizedCutoff = 1 << 27
	if twoW < denormalizedCutoff {
		return math.Float32frombits(sign | math.Float32bits(denormalized))
	}
	return math.Float32frombits(sign | math.Float32bits(normalized))
}

// F32ToF16 converts f to IEEE binary16 bits, rounding to nearest even;
// values beyond the f16 range become ±Inf and every NaN becomes 0x7E00 with
// f's sign, as ggml's reference conversion does.
func F32ToF16(f float32) uint16 {
	scaleToInf := math.Float32frombits(0x77800000)  // 2^112
	scaleToZero := math.Float32frombits(0x08800000) // 2^-110
	abs := math.Float32frombits(math.Float32bits(f) &^ 0x80000000)
	base := float32(float32(abs*scaleToInf) * scaleToZero)

	w := math.Float32bits(f)
	shl1W := w + w
	sign := w & 0x80000000
	bias := shl1W & 0xFF000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = math.Float32frombits((bias>>1)+0x07800000) + base
	bits := math.Float32bits(base)
	expBits := (bits >> 13) & 0x00007C00
	mantissaBits := bits & 0x00000FFF
	nonsign := expBits + mantissaBits
	if shl1W > 0xFF000000 {
		return uint16(sign>>16) | 0x7E00
	}
	return uint16(sign>>16 | nonsign)
}

// F32ToF16Slice writes F32ToF16 of each value of src into dst as
// little-endian binary16, 2*len(src) bytes (it panics when dst is
// shorter). Where the build has F16C (AVX2 builds) eight values at a time
// go through VCVTPS2PH, with the same bits for every input but NaN, which
// becomes a quiet NaN of the same sign with its payload's high bits (as
// ggml's F16C conversion does) rather than 0x7E00.
func F32ToF16Slice(dst []byte, src []float32) {
	_ = dst[:2*len(src)]
	i := f32ToF16Vec(dst, src)
	for ; i < len(src); i++ {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(src[i]))
	}
}

// BF16ToF32 converts bfloat16 bits to float32 (exact: the bits become the
// high half of the float32).
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 converts f to bfloat16 bits, rounding to nearest even; a NaN keeps
// its high bits and is forced quiet, as ggml does.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 { // NaN
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + ((u >> 16) & 1))) >> 16)
}
