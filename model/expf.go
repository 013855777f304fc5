package model

import "math"

// glibcExpf returns e^x rounded to float32 exactly as glibc's expf returns
// it on x86-64 with FMA (glibc ≥ 2.27, the __expf_fma variant), which ggml's
// scalar SiLU tail calls. It is not always correctly rounded (0.502 ulp), so
// float32(math.Exp(x)) differs from it on rare inputs.
//
// The method (public numbers from Arm's optimized-routines, MIT):
// x·32/ln2 = k + r, e^x = 2^(k/32) · p(r) with a 32-entry table of
// 2^(i/32) and a cubic p evaluated in float64 with GCC's FMA contractions,
// rounded once to f32. Overflow gives +Inf, underflow 0, NaN stays NaN.
func glibcExpf(x float32) float32 {
	top := (math.Float32bits(x) >> 20) & 0x7ff
	if top >= math.Float32bits(88)>>20 {
		switch {
		case math.IsInf(float64(x), -1):
			return 0
		case top >= math.Float32bits(float32(math.Inf(1)))>>20:
			return x + x
		case x > 0x1.62e42ep6:
			return float32(math.Inf(1))
		case x < -0x1.9fe368p6:
			return 0
		}
	}
	const (
		shift   = 0x1.8p+52
		invLn2N = 0x1.71547652b82fep+0 * 32
		c0      = 0x1.c6af84b912394p-5 / 32 / 32 / 32
		c1      = 0x1.ebfce50fac4f3p-3 / 32 / 32
		c2      = 0x1.62e42ff0c52d6p-1 / 32
	)
	z := invLn2N * float64(x)
	kd := z + shift
	ki := math.Float64bits(kd)
	kd -= shift
	r := z - kd
	t := exp2Tab32[ki%32] + ki<<(52-5)
	s := math.Float64frombits(t)
	p := math.FMA(c0, r, c1)
	r2 := r * r
	y := math.FMA(c2, r, 1)
	y = math.FMA(p, r2, y)
	return float32(y * s)
}

// exp2Tab32[i] is the bits of 2^(i/32) minus i<<47.
var exp2Tab32 = [32]uint64{
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
}
