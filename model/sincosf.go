package model

import "math"

// sincosf returns sin(x) and cos(x) rounded to float32 exactly as glibc's
// sincosf/sinf/cosf return them on x86-64 with FMA (glibc ≥ 2.28, the
// __sincosf_fma variant ggml's RoPE calls through cosf/sinf). These are not
// correctly rounded (worst error 0.56 ulp), and Go's float32(math.Sin(x))
// differs from them in about 2.5% of RoPE angles; a single differing value
// can flip an f16 rounding in the KV cache and change every later logit.
//
// The method (public numbers from Arm's optimized-routines, MIT): reduce x
// by π/2 in float64 (one fused multiply-subtract for |x| < 120, a 4/π
// fixed-point product above), then evaluate even/odd polynomials in float64
// with the multiply-adds fused as GCC contracts them, rounding once to f32.
// NaN and ±Inf give NaN.
func sincosf(y float32) (sin, cos float32) {
	top := (math.Float32bits(y) >> 20) & 0x7ff
	x := float64(y)
	switch {
	case top < sincosTop(0x1.921FB6p-1): // |y| < π/4
		if top < sincosTop(0x1p-12) {
			return y, 1
		}
		x2 := x * x
		return sincosPoly(x, x2, &sincosTable[0], 0)
	case top < sincosTop(120):
		// n = round(x·2/π), taken from the top bits of x·2^24·2/π.
		r := x * 0x1.45F306DC9C883p+23
		n := (int32(r) + 0x800000) >> 24
		x = math.FMA(-float64(n), 0x1.921FB54442D18p0, x)
		return sincosQuadrant(x, int(n), int(n))
	case top < sincosTop(float32(math.Inf(1))):
		xi := math.Float32bits(y)
		sign := int(xi >> 31)
		x, n := sincosReduceLarge(xi)
		// The sign of y picks the signs and table; n alone picks the swap.
		return sincosQuadrant(x, n+sign, n)
	}
	nan := float32(math.NaN())
	return nan, nan
}

func sincosTop(f float32) uint32 { return (math.Float32bits(f) >> 20) & 0x7ff }

// sincosQuadrant evaluates sin and cos of a reduced x: q picks the signs
// and polynomial table, an odd n swaps sine and cosine.
func sincosQuadrant(x float64, q, n int) (float32, float32) {
	p := &sincosTable[0]
	if q&2 != 0 {
		p = &sincosTable[1]
	}
	s := sincosSign[q&3]
	return sincosPoly(x*s, x*x, p, n)
}

// sincosCoef holds π/2 polynomial coefficients: c0..c4 of cos, s1..s3 of sin.
type sincosCoef struct{ c0, c1, c2, c3, c4, s1, s2, s3 float64 }

var sincosSign = [4]float64{1, -1, -1, 1}

// The second entry computes -cos rather than cos.
var sincosTable = [2]sincosCoef{
	{0x1p0, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
	{-0x1p0, 0x1.ffffffd0c621cp-2, -0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
}

// sincosPoly evaluates the sine and cosine polynomials at x (x2 = x²); an
// odd quadrant n swaps them.
func sincosPoly(x, x2 float64, p *sincosCoef, n int) (sin, cos float32) {
	x3 := x2 * x
	x4 := x2 * x2
	x5 := x3 * x2
	x6 := x4 * x2
	s1 := math.FMA(x2, p.s3, p.s2)
	s := math.FMA(x3, p.s1, x)
	sv := float32(math.FMA(x5, s1, s))
	c2 := math.FMA(x2, p.c4, p.c3)
	c1 := math.FMA(x2, p.c1, p.c0)
	c := math.FMA(x4, p.c2, c1)
	cv := float32(math.FMA(x6, c2, c))
	if n&1 != 0 {
		return cv, sv
	}
	return sv, cv
}

// inv4Pi is 4/π to 192 bits, eight new bits per entry.
var inv4Pi = [24]uint32{
	0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e,
	0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
	0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1,
	0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
	0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599,
	0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
}

// sincosReduceLarge reduces |f32 bits xi| >= 120 modulo π/2 in fixed point:
// the quadrant n and the remainder in [-π/4, π/4].
func sincosReduceLarge(xi uint32) (float64, int) {
	arr := inv4Pi[(xi>>26)&15:]
	shift := (xi >> 23) & 7
	m := ((xi & 0xffffff) | 0x800000) << shift
	res0 := uint64(m * arr[0])
	res1 := uint64(m) * uint64(arr[4])
	res2 := uint64(m) * uint64(arr[8])
	res0 = (res2 >> 32) | (res0 << 32)
	res0 += res1
	n := (res0 + 1<<61) >> 62
	res0 -= n << 62
	return float64(int64(res0)) * 0x1.921FB54442D18p-62, int(n)
}
