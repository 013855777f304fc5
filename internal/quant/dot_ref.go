package quant

import (
	"encoding/binary"
	"math"
)

// The reference loops. Each takes whole blocks (nb of them) and assumes the
// caller checked the buffer sizes. Inside a block products are summed as
// exact integers; the float32 accumulation order written here is the
// contract the fast paths reproduce bit for bit.

// q80Lanes accumulates one 32-weight block into ggml's eight Q8_0 lanes:
// lane j += d * Σ_{t<4} q[4j+t]*a[4j+t], one fused multiply-add per lane
// (q are the weights' signed quants, a the activation's).
func q80Lanes(acc *[8]float32, q *[32]int32, a []byte, d float32) {
	for j := range 8 {
		var s int32
		for t := range 4 {
			s += q[4*j+t] * int32(int8(a[4*j+t]))
		}
		acc[j] = fma32(d, float32(s), acc[j])
	}
}

// dotQ8_0Ref: ggml's eight-lane order (see order.go), d = dw*da.
func dotQ8_0Ref(w, a []byte, nb int) float32 {
	var acc [8]float32
	var q [32]int32
	for i := range nb {
		wb, ab := w[34*i:34*i+34], a[34*i:34*i+34]
		for j := range 32 {
			q[j] = int32(int8(wb[2+j]))
		}
		q80Lanes(&acc, &q, ab[2:], float32(f16At(wb, 0)*f16At(ab, 0)))
	}
	return hsum8(&acc)
}

// dotQ8_0AMXRef: ggml's AMX order (see order.go): one accumulator,
// acc = fma(float32(sumi), dw*da, acc) block after block.
func dotQ8_0AMXRef(w, a []byte, nb int) float32 {
	var acc float32
	for i := range nb {
		wb, ab := w[34*i:34*i+34], a[34*i:34*i+34]
		var sumi int32
		for j := range 32 {
			sumi += int32(int8(wb[2+j])) * int32(int8(ab[2+j]))
		}
		acc = fma32(float32(sumi), float32(f16At(wb, 0)*f16At(ab, 0)), acc)
	}
	return acc
}

// dotQ4_0AMXRef: ggml's AMX order, as dotQ8_0AMXRef.
func dotQ4_0AMXRef(w, a []byte, nb int) float32 {
	var acc float32
	for i := range nb {
		wb, ab := w[18*i:18*i+18], a[34*i:34*i+34]
		var sumi int32
		for j := range 16 {
			sumi += (int32(wb[2+j]&0x0F) - 8) * int32(int8(ab[2+j]))
			sumi += (int32(wb[2+j]>>4) - 8) * int32(int8(ab[18+j]))
		}
		acc = fma32(float32(sumi), float32(f16At(wb, 0)*f16At(ab, 0)), acc)
	}
	return acc
}

// dotQ4_0Ref: ggml's eight-lane order (see order.go), d = dw*da.
func dotQ4_0Ref(w, a []byte, nb int) float32 {
	var acc [8]float32
	var q [32]int32
	for i := range nb {
		wb, ab := w[18*i:18*i+18], a[34*i:34*i+34]
		for j := range 16 {
			q[j] = int32(wb[2+j]&0x0F) - 8
			q[j+16] = int32(wb[2+j]>>4) - 8
		}
		q80Lanes(&acc, &q, ab[2:], float32(f16At(wb, 0)*f16At(ab, 0)))
	}
	return hsum8(&acc)
}

// dotQ5_0Ref: ggml's eight-lane order (see order.go), d = dw*da.
func dotQ5_0Ref(w, a []byte, nb int) float32 {
	var acc [8]float32
	var q [32]int32
	for i := range nb {
		wb, ab := w[22*i:22*i+22], a[34*i:34*i+34]
		qh := binary.LittleEndian.Uint32(wb[2:])
		for j := range 16 {
			q[j] = (int32(wb[6+j]&0x0F) | int32((qh>>j<<4)&0x10)) - 16
			q[j+16] = (int32(wb[6+j]>>4) | int32((qh>>(j+12))&0x10)) - 16
		}
		q80Lanes(&acc, &q, ab[2:], float32(f16At(wb, 0)*f16At(ab, 0)))
	}
	return hsum8(&acc)
}

// unpackScalesK returns the eight 6-bit scales and mins of a Q4_K/Q5_K block.
func unpackScalesK(q []byte) (sc, mn [8]int32) {
	for j := range 8 {
		s, m := scaleMinK4(j, q)
		sc[j], mn[j] = int32(s), int32(m)
	}
	return
}

// bsumsMins returns Σ bsums[j]*mins[j/2] for a Q8_K block a.
func bsumsMins(a []byte, mn *[8]int32) int32 {
	var summ int32
	for j := range 16 {
		summ += int32(int16(binary.LittleEndian.Uint16(a[260+2*j:]))) * mn[j/2]
	}
	return summ
}

// q8KD returns the f32 scale of a Q8_K block.
func q8KD(a []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(a)) }

// q4KBlock returns, for one block_q4_K wb and block_q8_K ab, the exact
// integer sums of the AMX and CPU_REPACK orders — sumi = Σ scale·Σq4·q8
// and summ = Σ bsums·min — and their float32 scales d = dw*da and
// dmin = dminw*da.
func q4KBlock(wb, ab []byte) (sumi, summ int32, d, dmin float32) {
	sc, mn := unpackScalesK(wb[4:16])
	qs, q8 := wb[16:144], ab[4:260]
	for k := range 4 {
		var lo, hi int32
		for l := range 32 {
			lo += int32(qs[32*k+l]&0xF) * int32(int8(q8[64*k+l]))
			hi += int32(qs[32*k+l]>>4) * int32(int8(q8[64*k+32+l]))
		}
		sumi += sc[2*k]*lo + sc[2*k+1]*hi
	}
	da := q8KD(ab)
	return sumi, bsumsMins(ab, &mn), float32(f16At(wb, 0) * da), float32(f16At(wb, 2) * da)
}

// dotQ4_KAMXRef: ggml's AMX order (see order.go). Per block (q4KBlock):
// sum = fma(float32(sumi), d, sum), then sum = fma(-float32(summ), dmin, sum).
func dotQ4_KAMXRef(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		sumi, summ, d, dmin := q4KBlock(w[144*i:144*i+144], a[292*i:292*i+292])
		sum = fma32(-float32(summ), dmin, fma32(float32(sumi), d, sum))
	}
	return sum
}

// dotQ4_KRepackRef: ggml's CPU_REPACK order for Q4_K (q4_K_8x8, its x86
// gemv and gemm; see order.go). The integer sums are dotQ4_KAMXRef's; the
// mins keep an accumulator of their own: per block
// acc = fma(float32(sumi), d, acc) and accm = fma(float32(summ), dmin, accm),
// and the result is acc - accm.
func dotQ4_KRepackRef(w, a []byte, nb int) float32 {
	var acc, accm float32
	for i := range nb {
		sumi, summ, d, dmin := q4KBlock(w[144*i:144*i+144], a[292*i:292*i+292])
		acc = fma32(float32(sumi), d, acc)
		accm = fma32(float32(summ), dmin, accm)
	}
	return acc - accm
}

// dotQ5_KAMXRef: as dotQ4_KAMXRef with 5-bit quants.
func dotQ5_KAMXRef(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		wb, ab := w[176*i:176*i+176], a[292*i:292*i+292]
		sc, mn := unpackScalesK(wb[4:16])
		qh, qs, q8 := wb[16:48], wb[48:176], ab[4:260]
		var sumi int32
		for k := range 4 {
			var lo, hi int32
			for l := range 32 {
				q1 := int32(qs[32*k+l]&0xF) | int32(qh[l]>>(2*k)&1)<<4
				q2 := int32(qs[32*k+l]>>4) | int32(qh[l]>>(2*k+1)&1)<<4
				lo += q1 * int32(int8(q8[64*k+l]))
				hi += q2 * int32(int8(q8[64*k+32+l]))
			}
			sumi += sc[2*k]*lo + sc[2*k+1]*hi
		}
		summ := bsumsMins(ab, &mn)
		da := q8KD(ab)
		d := float32(f16At(wb, 0) * da)
		dmin := float32(f16At(wb, 2) * da)
		sum = fma32(-float32(summ), dmin, fma32(float32(sumi), d, sum))
	}
	return sum
}

// dotQ6_KAMXRef: ggml's AMX order, per block sum = fma(float32(sumi), dw*da,
// sum), sumi = Σ scale·Σ(q6-32)·q8 (exact).
func dotQ6_KAMXRef(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		wb, ab := w[210*i:210*i+210], a[292*i:292*i+292]
		q8 := ab[4:260]
		var sumi int32
		for h := range 2 {
			ql, qh := wb[64*h:64*h+64], wb[128+32*h:128+32*h+32]
			sc := wb[192+8*h : 192+8*h+8]
			var s [8]int32 // per 16-weight sub-block of this half
			for l := range 32 {
				q1, q2, q3, q4 := q6At(ql, qh, l)
				is := l / 16
				s[is] += int32(q1) * int32(int8(q8[128*h+l]))
				s[is+2] += int32(q2) * int32(int8(q8[128*h+32+l]))
				s[is+4] += int32(q3) * int32(int8(q8[128*h+64+l]))
				s[is+6] += int32(q4) * int32(int8(q8[128*h+96+l]))
			}
			for j := range 8 {
				sumi += int32(int8(sc[j])) * s[j]
			}
		}
		d := float32(f16At(wb, 208) * q8KD(ab))
		sum = fma32(float32(sumi), d, sum)
	}
	return sum
}

// lanes is the number of float32 accumulators of the float dot products:
// element i is added into lane i%lanes, each lane in index order.
const lanes = 32

// reduceLanes sums the accumulators in a fixed tree: first
// s[k] = (l[k]+l[k+8]) + (l[k+16]+l[k+24]) for k < 8, then
// t[k] = s[k]+s[k+4], u[k] = t[k]+t[k+2], and u[0]+u[1].
func reduceLanes(l *[lanes]float32) float32 {
	var s [8]float32
	for k := range 8 {
		s[k] = (l[k] + l[k+8]) + (l[k+16] + l[k+24])
	}
	var t [4]float32
	for k := range 4 {
		t[k] = s[k] + s[k+4]
	}
	u0, u1 := t[0]+t[2], t[1]+t[3]
	return u0 + u1
}

// f32At reads the little-endian float32 at element i of b.
func f32At(b []byte, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
}

// dotF32Tail finishes ggml's F32 order (see order.go): acc holds the 4*epr
// lanes over elements [0, from), from a multiple of 4*epr; the lanes are
// reduced and the products of [from, n) are added in index order in
// float32, as GCC compiled ggml's scalar leftover loop: vectors of epr
// products while that many remain, then one of epr/2, each product rounded
// before its add, and the last (fewer than epr/2) with one fused
// multiply-add each.
func dotF32Tail(acc []float32, epr int, w, a []byte, from, n int) float32 {
	sum := reduceF16Lanes(acc, epr)
	i := from
	for n-i >= epr {
		for e := i + epr; i < e; i++ {
			sum += float32(f32At(w, i) * f32At(a, i))
		}
	}
	if n-i >= epr/2 {
		for e := i + epr/2; i < e; i++ {
			sum += float32(f32At(w, i) * f32At(a, i))
		}
	}
	for ; i < n; i++ {
		sum = fma32(f32At(w, i), f32At(a, i), sum)
	}
	return sum
}

// dotF16Tail finishes ggml's F16 order (see order.go): acc holds the 4*epr
// lanes over elements [0, from), from a multiple of 4*epr; the lanes are
// reduced, widened to float64, and the products of [from, n), each rounded
// to float32, are added in float64.
func dotF16Tail(acc []float32, epr int, w, a []byte, from, n int) float32 {
	sum := float64(reduceF16Lanes(acc, epr))
	for i := from; i < n; i++ {
		sum += float64(float32(f16At(w, 2*i) * f16At(a, 2*i)))
	}
	return float32(sum)
}

func dotBF16Tail(acc *[lanes]float32, w, a []byte, from, n int) float32 {
	for i := from; i < n; i++ {
		x := BF16ToF32(binary.LittleEndian.Uint16(w[2*i:]))
		y := BF16ToF32(binary.LittleEndian.Uint16(a[2*i:]))
		acc[i%lanes] += float32(x * y)
	}
	return reduceLanes(acc)
}

// dotF32Ref: Σ x[i]*y[i] in ggml's F32 order (see order.go).
func dotF32Ref(w, a []byte, n int) float32 {
	var acc [64]float32
	step := 4 * f16Epr
	m := n - n%step
	for i := 0; i < m; i += step {
		for k := range step {
			acc[k] = fma32(f32At(w, i+k), f32At(a, i+k), acc[k])
		}
	}
	return dotF32Tail(acc[:step], f16Epr, w, a, m, n)
}

// dotBF16Ref: Σ x[i]*y[i] over n elements, each product rounded to float32,
// accumulated in 32 lanes (see reduceLanes).
// dotF16Ref: Σ x[i]*y[i] in ggml's F16 order (see order.go).
func dotF16Ref(w, a []byte, n int) float32 {
	var acc [64]float32
	step := 4 * f16Epr
	m := n - n%step
	for i := 0; i < m; i += step {
		for k := range step {
			acc[k] = fma32(f16At(w, 2*(i+k)), f16At(a, 2*(i+k)), acc[k])
		}
	}
	return dotF16Tail(acc[:step], f16Epr, w, a, m, n)
}

func dotBF16Ref(w, a []byte, n int) float32 {
	var acc [lanes]float32
	return dotBF16Tail(&acc, w, a, 0, n)
}
