package q4k

import (
	"encoding/binary"
	"math"
)

// The reference loops. Each takes whole blocks (nb of them) and assumes the
// caller checked the buffer sizes. Inside a block products are summed as
// exact integers; the float32 accumulation order written here is the
// contract the fast paths reproduce bit for bit.

// dotQ8_0Ref: per block sum += float32(sumi) * (dw*da).
func dotQ8_0Ref(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		wb, ab := w[34*i:34*i+34], a[34*i:34*i+34]
		var sumi int32
		for j := range 32 {
			sumi += int32(int8(wb[2+j])) * int32(int8(ab[2+j]))
		}
		sum += float32(float32(sumi) * float32(f16At(wb, 0)*f16At(ab, 0)))
	}
	return sum
}

// dotQ4_0Ref: per block sum += (float32(sumi) * dw) * da.
func dotQ4_0Ref(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		wb, ab := w[18*i:18*i+18], a[34*i:34*i+34]
		var sumi int32
		for j := range 16 {
			sumi += int32(int(wb[2+j]&0x0F)-8) * int32(int8(ab[2+j]))
			sumi += int32(int(wb[2+j]>>4)-8) * int32(int8(ab[18+j]))
		}
		sum += float32(float32(float32(sumi)*f16At(wb, 0)) * f16At(ab, 0))
	}
	return sum
}

// dotQ5_0Ref: per block sum += (dw*da) * float32(sumi).
func dotQ5_0Ref(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		wb, ab := w[22*i:22*i+22], a[34*i:34*i+34]
		qh := binary.LittleEndian.Uint32(wb[2:])
		var sumi int32
		for j := range 16 {
			h0 := int32((qh >> j << 4) & 0x10)
			h1 := int32((qh >> (j + 12)) & 0x10)
			sumi += ((int32(wb[6+j]&0x0F) | h0) - 16) * int32(int8(ab[2+j]))
			sumi += ((int32(wb[6+j]>>4) | h1) - 16) * int32(int8(ab[18+j]))
		}
		sum += float32(float32(f16At(wb, 0)*f16At(ab, 0)) * float32(sumi))
	}
	return sum
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

// dotQ4_KRef: per block, with d = dw*da and dmin = dminw*da,
// sum = sum + d*float32(sumi) - dmin*float32(summ), where sumi = Σ scale·Σq4·q8
// and summ = Σ bsums·min.
func dotQ4_KRef(w, a []byte, nb int) float32 {
	var sum float32
	for i := range nb {
		wb, ab := w[144*i:144*i+144], a[292*i:292*i+292]
		sc, mn := unpackScalesK(wb[4:16])
		qs, q8 := wb[16:144], ab[4:260]
		var sumi int32
		for k := range 4 {
			var lo, hi int32
			for l := range 32 {
				lo += int32(qs[32*k+l]&0xF) * int32(int8(q8[64*k+l]))
				hi += int32(qs[32*k+l]>>4) * int32(int8(q8[64*k+32+l]))
			}
			sumi += sc[2*k]*lo + sc[2*k+1]*hi
		}
		summ := bsumsMins(ab, &mn)
		da := q8KD(ab)
		d := float32(f16At(wb, 0) * da)
		dmin := float32(f16At(wb, 2) * da)
		sum = sum + float32(d*float32(sumi)) - float32(dmin*float32(summ))
	}
	return sum
}

// dotQ5_KRef: as dotQ4_KRef with 5-bit quants.
func dotQ5_KRef(w, a []byte, nb int) float32 {
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
		sum = sum + float32(d*float32(sumi)) - float32(dmin*float32(summ))
	}
	return sum
}

// dotQ6_KRef: per block sum += (dw*da) * float32(sumi), sumi = Σ scale·Σ(q6-32)·q8.
func dotQ6_KRef(w, a []byte, nb int) float32 {
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
		sum += float32(d * float32(sumi))
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

// dotF32Lanes adds x[i]*y[i] for i in [from, n) into the lanes, continuing
// the lane order (i%32), then reduces.
func dotF32Tail(acc *[lanes]float32, w, a []byte, from, n int) float32 {
	for i := from; i < n; i++ {
		x := math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:]))
		acc[i%lanes] += float32(x * y)
	}
	return reduceLanes(acc)
}

func dotF16Tail(acc *[lanes]float32, w, a []byte, from, n int) float32 {
	for i := from; i < n; i++ {
		acc[i%lanes] += float32(f16At(w, 2*i) * f16At(a, 2*i))
	}
	return reduceLanes(acc)
}

func dotBF16Tail(acc *[lanes]float32, w, a []byte, from, n int) float32 {
	for i := from; i < n; i++ {
		x := BF16ToF32(binary.LittleEndian.Uint16(w[2*i:]))
		y := BF16ToF32(binary.LittleEndian.Uint16(a[2*i:]))
		acc[i%lanes] += float32(x * y)
	}
	return reduceLanes(acc)
}

// dotF32Ref, dotF16Ref, dotBF16Ref: Σ x[i]*y[i] over n elements, each
// product rounded to float32, accumulated in 32 lanes (see reduceLanes).
func dotF32Ref(w, a []byte, n int) float32 {
	var acc [lanes]float32
	return dotF32Tail(&acc, w, a, 0, n)
}

func dotF16Ref(w, a []byte, n int) float32 {
	var acc [lanes]float32
	return dotF16Tail(&acc, w, a, 0, n)
}

func dotBF16Ref(w, a []byte, n int) float32 {
	var acc [lanes]float32
	return dotBF16Tail(&acc, w, a, 0, n)
}
