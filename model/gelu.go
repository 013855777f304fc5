package model

import (
	"math"
	"sync"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// This file holds gemma3's activation and logit softcapping as ggml's CPU
// backend computes them: ggml_vec_geglu_f32 under GGML_GELU_FP16 (which
// ggml defines) looks the GELU of each gate value up in a table of every
// f16, and ggml_tanh calls glibc's tanhf.

// GELU's tanh approximation, as ggml's constants (f32).
const (
	geluCoefA      = 0.044715
	geluSqrt2OverP = 0.79788456080286535587989211986876
)

// geluF16 is ggml_table_gelu_f16: for every f16 bit pattern h, the f16 of
// 0.5·x·(1 + tanhf(√(2/π)·x·(1 + 0.044715·x·x))) at x = h's value, computed
// in f32 as ggml's FMA builds compile it (1 + 0.044715·x·x fused) and
// rounded to f16 (nearest even). A NaN input keeps its sign; the NaN that
// -inf gives (-inf·0) is x86's default NaN, negative.
var geluF16 = sync.OnceValue(func() *[1 << 16]uint16 {
	var t [1 << 16]uint16
	for i := range t {
		x := quant.F16ToF32(uint16(i))
		inner := float32(float32(geluSqrt2OverP*x) * fma32(float32(geluCoefA*x), x, 1))
		g := float32(float32(0.5*x) * (1 + tanhf(inner)))
		switch {
		case g == g:
			t[i] = quant.F32ToF16(g)
		case x != x:
			t[i] = uint16(i)&0x8000 | 0x7e00
		default:
			t[i] = 0xfe00
		}
	}
	return &t
})

// geglu writes h[i] = gelu(gate[i]) * up[i] as ggml_vec_geglu_f32 does with
// its f16 table: 0 for gate values at or below -10, gate·up at or above 10,
// else the table's GELU of the gate rounded to f16, times up. h may alias
// gate or up.
func geglu(h, gate, up []float32) {
	t := geluF16()
	for i, g := range gate {
		switch {
		case g <= -10:
			h[i] = 0
		case g >= 10:
			h[i] = g * up[i]
		default:
			h[i] = f16Table[t[quant.F32ToF16(g)]] * up[i]
		}
	}
}

// softcap is llama.cpp's final logit softcapping: each logit x becomes
// cap·tanhf(x·(1/cap)), three ggml ops (scale, tanh, scale) each rounded
// to f32.
func softcap(logits []float32, cap float32) {
	inv := 1 / cap
	for i, x := range logits {
		logits[i] = tanhf(x*inv) * cap
	}
}

// tanhf returns glibc's tanhf (2.36, x86-64) bit for bit: fdlibm's
// method, tanh(x) = 1 - 2/(expm1(2|x|)+2) for |x| >= 1 and
// -expm1(-2|x|)/(expm1(-2|x|)+2) below, ±1 from 22 on, x itself below
// 2^-55, each step rounded to f32 (glibc's generic x86-64 build has no FMA
// to contract with). testdata/tanhf_glibc.txt checks it against glibc.
func tanhf(x float32) float32 {
	bits := math.Float32bits(x)
	ix := bits & 0x7fffffff
	neg := bits>>31 != 0
	if ix >= 0x7f800000 { // inf or NaN
		if neg {
			return 1/x - 1
		}
		return 1/x + 1
	}
	var z float32
	switch {
	case ix == 0:
		return x
	case ix < 0x24000000: // |x| < 2^-55
		return x * (1 + x)
	case ix >= 0x41b00000: // |x| >= 22
		z = 1
	case ix >= 0x3f800000: // |x| >= 1
		t := expm1f(2 * math.Float32frombits(ix))
		z = 1 - 2/(t+2)
	default:
		t := expm1f(-2 * math.Float32frombits(ix))
		z = -t / (t + 2)
	}
	if neg {
		return -z
	}
	return z
}

// expm1f is glibc's expm1f (fdlibm's, in f32) for the arguments tanhf
// passes it (finite, |x| < 44): x reduced by k·ln2 (ln2 split in a high and
// a low part) to |r| <= ln2/2, expm1(r) from a rational approximation with
// the correction c of the reduction, and 2^k put back into the exponent.
func expm1f(x float32) float32 {
	const (
		oThreshold = 8.8721679688e+01
		ln2Hi      = 6.9313812256e-01
		ln2Lo      = 9.0580006145e-06
		invLn2     = 1.4426950216e+00
		q1         = -3.3333335072e-02
		q2         = 1.5873016091e-03
		q3         = -7.9365076090e-05
		q4         = 4.0082177293e-06
		q5         = -2.0109921195e-07
	)
	hx := math.Float32bits(x)
	neg := hx>>31 != 0
	hx &= 0x7fffffff
	if hx >= 0x4195b844 { // |x| >= 27·ln2
		if hx >= 0x42b17218 {
			switch {
			case hx > 0x7f800000:
				return x + x
			case hx == 0x7f800000:
				if neg {
					return -1
				}
				return x
			case x > oThreshold:
				return float32(math.Inf(1))
			}
		}
		if neg {
			return -1
		}
	}
	var hi, lo, c float32
	var k int32
	switch {
	case hx > 0x3eb17218: // |x| > ln2/2
		if hx < 0x3f851592 { // and < 1.5·ln2
			if !neg {
				hi, lo, k = x-ln2Hi, ln2Lo, 1
			} else {
				hi, lo, k = x+ln2Hi, -ln2Lo, -1
			}
		} else {
			half := float32(0.5)
			if neg {
				half = -0.5
			}
			k = int32(float32(invLn2*x) + half)
			t := float32(k)
			hi = x - float32(t*ln2Hi)
			lo = float32(t * ln2Lo)
		}
		x = hi - lo
		c = (hi - x) - lo
	case hx < 0x33000000: // |x| < 2^-25
		return x
	}
	hfx := float32(0.5 * x)
	hxs := float32(x * hfx)
	r1 := 1 + float32(hxs*(q1+float32(hxs*(q2+float32(hxs*(q3+float32(hxs*(q4+float32(hxs*q5)))))))))
	t := 3 - float32(r1*hfx)
	e := float32(hxs * ((r1 - t) / (6 - float32(x*t))))
	if k == 0 {
		return x - (float32(x*e) - hxs)
	}
	e = float32(x*(e-c)) - c
	e -= hxs
	addExp := func(y float32) float32 { return math.Float32frombits(uint32(int32(math.Float32bits(y)) + k<<23)) }
	switch {
	case k == -1:
		return float32(0.5*(x-e)) - 0.5
	case k == 1:
		if x < -0.25 {
			return -2 * (e - (x + 0.5))
		}
		return 1 + float32(2*(x-e))
	case k <= -2 || k > 56:
		return addExp(1-(e-x)) - 1
	case k < 23:
		t = math.Float32frombits(uint32(0x3f800000 - (0x1000000 >> k))) // 1 - 2^-k
		return addExp(t - (e - x))
	}
	t = math.Float32frombits(uint32((0x7f - k) << 23)) // 2^-k
	y := x - (e + t)
	y++
	return addExp(y)
}
