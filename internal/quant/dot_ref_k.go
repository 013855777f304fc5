package quant

import "encoding/binary"

// The K-quant reference loops in ggml's plain order: the AVX2 branch of
// ggml_vec_dot_q{4,5,6}_K_q8_K (see order.go and docs/ggml-order.md). Eight
// int32 lanes per block: lane j takes, from every 32-byte run of quants, the
// products at bytes 4j..4j+3 times that run's scale (runs of 32 weights for
// Q4_K/Q5_K; Q6_K runs change scale at byte 16). Each block adds
// fma(dw*da, float32(lane_j), acc_j); the lanes end in hsum8.

// q8KSubSums returns the eight 32-weight sums of a Q8_K block's bsums
// (bsums[2m] + bsums[2m+1]).
func q8KSubSums(a []byte) (s [8]int32) {
	for m := range 8 {
		s[m] = int32(int16(binary.LittleEndian.Uint16(a[260+4*m:]))) +
			int32(int16(binary.LittleEndian.Uint16(a[262+4*m:])))
	}
	return
}

// dotQ4_KRef: lanes as above; the mins go to four more lanes,
// m_k = fma(-(da*dminw), float32(min[2k]*s[2k] + min[2k+1]*s[2k+1]), m_k)
// (s from q8KSubSums), reduced (m0+m2) + (m1+m3) and added to hsum8 last.
func dotQ4_KRef(w, a []byte, nb int) float32 {
	var acc [8]float32
	var accM [4]float32
	for i := range nb {
		wb, ab := w[144*i:144*i+144], a[292*i:292*i+292]
		sc, mn := unpackScalesK(wb[4:16])
		qs, q8 := wb[16:144], ab[4:260]
		var lane [8]int32
		for k := range 4 {
			for l := range 32 {
				lo := int32(qs[32*k+l]&0xF) * int32(int8(q8[64*k+l]))
				hi := int32(qs[32*k+l]>>4) * int32(int8(q8[64*k+32+l]))
				lane[l/4] += sc[2*k]*lo + sc[2*k+1]*hi
			}
		}
		da := q8KD(ab)
		d := float32(da * f16At(wb, 0))
		dmin := float32(-da * f16At(wb, 2))
		for j := range 8 {
			acc[j] = fma32(d, float32(lane[j]), acc[j])
		}
		s := q8KSubSums(ab)
		for k := range 4 {
			accM[k] = fma32(dmin, float32(mn[2*k]*s[2*k]+mn[2*k+1]*s[2*k+1]), accM[k])
		}
	}
	return hsum8(&acc) + ((accM[0] + accM[2]) + (accM[1] + accM[3]))
}

// dotQ5_KRef: lanes as above with 5-bit quants; the mins are one float32,
// summs = fma(-(da*dminw), float32(Σ min·s), summs), added to hsum8 last.
func dotQ5_KRef(w, a []byte, nb int) float32 {
	var acc [8]float32
	var summs float32
	for i := range nb {
		wb, ab := w[176*i:176*i+176], a[292*i:292*i+292]
		sc, mn := unpackScalesK(wb[4:16])
		qh, qs, q8 := wb[16:48], wb[48:176], ab[4:260]
		var lane [8]int32
		for k := range 4 {
			for l := range 32 {
				q1 := int32(qs[32*k+l]&0xF) | int32(qh[l]>>(2*k)&1)<<4
				q2 := int32(qs[32*k+l]>>4) | int32(qh[l]>>(2*k+1)&1)<<4
				lane[l/4] += sc[2*k]*q1*int32(int8(q8[64*k+l])) + sc[2*k+1]*q2*int32(int8(q8[64*k+32+l]))
			}
		}
		da := q8KD(ab)
		d := float32(da * f16At(wb, 0))
		dmin := float32(-da * f16At(wb, 2))
		for j := range 8 {
			acc[j] = fma32(d, float32(lane[j]), acc[j])
		}
		s := q8KSubSums(ab)
		var summ int32
		for m := range 8 {
			summ += mn[m] * s[m]
		}
		summs = fma32(dmin, float32(summ), summs)
	}
	return hsum8(&acc) + summs
}

// dotQ6_KRef: lanes as above with unsigned 6-bit quants (0..63); the -32
// offset is taken per lane pair from the bsums: lane j -= 32*(bsums[2j]*
// scale[2j] + bsums[2j+1]*scale[2j+1]).
func dotQ6_KRef(w, a []byte, nb int) float32 {
	var acc [8]float32
	for i := range nb {
		wb, ab := w[210*i:210*i+210], a[292*i:292*i+292]
		q8 := ab[4:260]
		var lane [8]int32
		for h := range 2 {
			ql, qh := wb[64*h:64*h+64], wb[128+32*h:128+32*h+32]
			sc := wb[192+8*h : 192+8*h+8]
			for l := range 32 {
				q := [4]int32{
					int32(ql[l]&0xF | (qh[l]&3)<<4),
					int32(ql[l+32]&0xF | ((qh[l]>>2)&3)<<4),
					int32(ql[l]>>4 | ((qh[l]>>4)&3)<<4),
					int32(ql[l+32]>>4 | ((qh[l]>>6)&3)<<4),
				}
				for v := range 4 {
					lane[l/4] += int32(int8(sc[2*v+l/16])) * q[v] * int32(int8(q8[128*h+32*v+l]))
				}
			}
		}
		for j := range 8 {
			b0 := int32(int16(binary.LittleEndian.Uint16(ab[260+4*j:])))
			b1 := int32(int16(binary.LittleEndian.Uint16(ab[262+4*j:])))
			lane[j] -= 32 * (b0*int32(int8(wb[192+2*j])) + b1*int32(int8(wb[193+2*j])))
		}
		d := float32(q8KD(ab) * f16At(wb, 208))
		for j := range 8 {
			acc[j] = fma32(d, float32(lane[j]), acc[j])
		}
	}
	return hsum8(&acc)
}
