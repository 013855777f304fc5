package guest

import "math"

// Constants of Log (fdlibm's e_log.c). The C SDK spells the same decimal
// literals, which round to the same binary64 values.
const (
	ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
	lg1   = 6.666666666666735130e-01
	lg2   = 3.999999999940941908e-01
	lg3   = 2.857142874366239149e-01
	lg4   = 2.222219843214978396e-01
	lg5   = 1.818357216161805012e-01
	lg6   = 1.531383769920937332e-01
	lg7   = 1.479819860511658591e-01
	sqrt2 = 0x1.6a09e667f3bcdp+0
)

// Log is the SDK's natural logarithm, for policies that need one (typical-p,
// mirostat). It is not part of ABI §9, so the SDKs define it together: the
// C SDK's realizar_log performs the same binary64 operations in the same
// order (each product converted to float64 so Go cannot fuse it), and the
// two agree bit for bit (c_test.go checks it). Within 1 ulp of ln x.
//
//	Log(NaN) = Log(x < 0) = NaN, Log(±0) = -Inf, Log(+Inf) = +Inf
//	x = m·2^k with m in (√2/2, √2], f = m-1, s = f/(2+f)
//	Log(x) = k·ln2hi - ((f²/2 - (s·(f²/2 + R(s²)) + k·ln2lo)) - f)
func Log(x float64) float64 {
	switch {
	case x != x || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case x > math.MaxFloat64:
		return x
	}
	k := int32(0)
	if x < 0x1p-1022 {
		x = float64(x * 0x1p54)
		k = -54
	}
	b := math.Float64bits(x)
	k += int32(b>>52) - 1023
	m := math.Float64frombits(b&(1<<52-1) | 0x3ff0000000000000)
	if m > sqrt2 {
		m = float64(m * 0.5)
		k++
	}
	f := m - 1
	s := f / (2 + f)
	z := float64(s * s)
	w := float64(z * z)
	t1 := float64(w * (lg2 + float64(w*(lg4+float64(w*lg6)))))
	t2 := float64(z * (lg1 + float64(w*(lg3+float64(w*(lg5+float64(w*lg7)))))))
	r := t2 + t1
	hfsq := float64(float64(0.5*f) * f)
	kf := float64(k)
	return float64(kf*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(kf*ln2Lo))) - f)
}
