package quant_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestF16(t *testing.T) {
	tests := []struct {
		name string
		h    uint16
		f    float32
	}{
		{"one", 0x3C00, 1},
		{"minus two", 0xC000, -2},
		{"max", 0x7BFF, 65504},
		{"smallest subnormal", 0x0001, float32(math.Ldexp(1, -24))},
		{"largest subnormal", 0x03FF, float32(math.Ldexp(1023, -24))},
		{"minus zero", 0x8000, float32(math.Copysign(0, -1))},
		{"inf", 0x7C00, float32(math.Inf(1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, math.Float32bits(tc.f), math.Float32bits(quant.F16ToF32(tc.h)))
			assert.Equal(t, tc.h, quant.F32ToF16(tc.f))
		})
	}
}

func TestF32ToF16Rounding(t *testing.T) {
	tests := []struct {
		name string
		f    float32
		h    uint16
	}{
		{"tie to even down", 1 + 1.0/2048, 0x3C00},
		{"tie to even up", 1 + 3.0/2048, 0x3C02},
		{"above tie", 1 + 1.0/2048 + 1.0/65536, 0x3C01},
		{"overflow", 65520, 0x7C00},
		{"just below overflow", 65519, 0x7BFF},
		{"underflow to zero", float32(math.Ldexp(1, -26)), 0x0000},
		{"rounds to subnormal", float32(math.Ldexp(3, -26)), 0x0001},
		{"nan", float32(math.NaN()), 0x7E00},
		{"negative nan", math.Float32frombits(0xFFC00001), 0xFE00},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.h, quant.F32ToF16(tc.f))
		})
	}
}

func TestF16RoundTripAllFinite(t *testing.T) {
	for h := range 1 << 16 {
		if h&0x7C00 == 0x7C00 { // Inf and NaN
			continue
		}
		assert.Equal(t, uint16(h), quant.F32ToF16(quant.F16ToF32(uint16(h))), "h=%#x", h)
	}
}

func TestBF16(t *testing.T) {
	tests := []struct {
		name string
		bits uint32
		h    uint16
	}{
		{"one", 0x3F800000, 0x3F80},
		{"tie to even down", 0x3F808000, 0x3F80},
		{"tie to even up", 0x3F818000, 0x3F82},
		{"above tie", 0x3F808001, 0x3F81},
		{"signalling nan made quiet", 0x7F800001, 0x7FC0},
		{"inf", 0x7F800000, 0x7F80},
		{"max rounds to inf", 0x7F7FFFFF, 0x7F80},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.h, quant.F32ToBF16(math.Float32frombits(tc.bits)))
		})
	}
	assert.Equal(t, float32(-2.5), quant.BF16ToF32(0xC020))
}

// F32ToF16Slice has F32ToF16's bits for every non-NaN float32 (every
// 1021st bit pattern, the edges of binary16's range and lengths around the
// eight-value step), and gives a NaN for a NaN.
func TestF32ToF16Slice(t *testing.T) {
	var src []float32
	for b := uint64(0); b < 1<<32; b += 1021 {
		src = append(src, math.Float32frombits(uint32(b)))
	}
	src = append(src, 65504, 65520, 65519.996, -65520, 6.1035156e-05, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08)
	for _, n := range []int{0, 1, 7, 8, 9, 17, len(src)} {
		dst := make([]byte, 2*n+2)
		quant.F32ToF16Slice(dst, src[:n])
		for i, f := range src[:n] {
			got := binary.LittleEndian.Uint16(dst[2*i:])
			if f != f {
				if got&0x7C00 != 0x7C00 || got&0x3FF == 0 {
					t.Fatalf("NaN %#x gave %#x", math.Float32bits(f), got)
				}
			} else if want := quant.F32ToF16(f); got != want {
				t.Fatalf("f32 %#x (%v): %#x, want %#x", math.Float32bits(f), f, got, want)
			}
		}
		require.Equal(t, []byte{0, 0}, dst[2*n:], "wrote past 2*len(src)")
	}
	require.Panics(t, func() { quant.F32ToF16Slice(make([]byte, 3), make([]float32, 2)) })
}
