package abi

import "math"

// Constants of Exp. The hexadecimal forms are normative; C SDKs spell them
// with the same hexadecimal float literals.
const (
	expLog2e = 0x1.71547652b82fep+0  // 1/ln 2 rounded to f64
	expLn2Hi = 0x1.62e42fee00000p-1  // ln 2, high part (low 32 bits zero, so k*expLn2Hi is exact)
	expLn2Lo = 0x1.a39ef35793c76p-33 // ln 2 - expLn2Hi
	// ExpMax: Exp(x) = +Inf for x > ExpMax.
	ExpMax = 709.0
	// ExpMin: Exp(x) = 0 for x < ExpMin (no subnormal results).
	ExpMin = -708.0
)

// expCoef[i] is 1/(i+2)!, correctly rounded to f64.
var expCoef = [12]float64{
	0x1.0000000000000p-1,
	0x1.5555555555555p-3,
	0x1.5555555555555p-5,
	0x1.1111111111111p-7,
	0x1.6c16c16c16c17p-10,
	0x1.a01a01a01a01ap-13,
	0x1.a01a01a01a01ap-16,
	0x1.71de3a556c734p-19,
	0x1.27e4fb7789f5cp-22,
	0x1.ae64567f544e4p-26,
	0x1.1eed8eff8d898p-29,
	0x1.6124613a86d09p-33,
}

// Exp is the contract's exponential, the only one a policy may use for
// probabilities. Every operation is one IEEE-754 binary64 operation rounded
// to nearest; nothing is fused (each product is converted to float64 before
// it is added, which stops Go from emitting FMA).
//
//	NaN -> NaN; x > ExpMax -> +Inf; x < ExpMin -> 0
//	t := x * log2e
//	k := trunc(t + 0.5) if t >= 0, else trunc(t - 0.5)   (an int32)
//	r := (x - k*ln2hi) - k*ln2lo
//	p := c13; for n := 12 down to 2: p = p*r + c_n        (c_n = 1/n!)
//	p = p*r + 1; p = p*r + 1                              (the r^1 and r^0 terms)
//	return p * 2^k                                        (2^k built from its bits)
//
// The result is within 2 ulp of e^x on [ExpMin, ExpMax].
func Exp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > ExpMax:
		return math.Inf(1)
	case x < ExpMin:
		return 0
	}
	t := float64(x * expLog2e)
	var k int32
	if t >= 0 {
		k = int32(t + 0.5)
	} else {
		k = int32(t - 0.5)
	}
	kf := float64(k)
	r := float64(x-float64(kf*expLn2Hi)) - float64(kf*expLn2Lo)
	p := expCoef[len(expCoef)-1]
	for i := len(expCoef) - 2; i >= 0; i-- {
		p = float64(p*r) + expCoef[i]
	}
	p = float64(p*r) + 1
	p = float64(p*r) + 1
	return p * math.Float64frombits(uint64(int64(k)+1023)<<52)
}
