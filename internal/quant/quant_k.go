package quant

import (
	"math"
)

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it quantizes to zero.
const groupMaxEps = 1e-15

// makeQKX2Quants is ggml's make_qkx2_quants: it fits x ≈ scale*L - min with
// L in [0, nmax] under the weights w, searching nstep+1 candidate scales
// around nmax/(max-min). It writes L and returns scale and the (negated,
// non-negative) min. laux is scratch of len(x).
func makeQKX2Quants(nmax int, x, w []float32, l, laux []uint8, rmin, rdelta float32, nstep int) (scale, theMin float32) {
	mn, mx := x[0], x[0]
	sumW := w[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < len(x); i++ {
		if x[i] < mn {
			mn = x[i]
		}
		if x[i] > mx {
			mx = x[i]
		}
		sumW += w[i]
		sumX += float32(w[i] * x[i])
	}
	if mn > 0 {
		mn = 0
	}
	if mx == mn {
		clear(l)
		return 0, -mn
	}
	iscale := float32(nmax) / (mx - mn)
	scale = 1 / iscale
	var bestError float32
	for i := range x {
		q := max(0, min(nmax, nearestInt(float32(iscale*(x[i]-mn)))))
		l[i] = uint8(q)
		diff := float32(scale*float32(l[i])) + mn - x[i]
		bestError += float32(w[i] * float32(diff*diff))
	}
	if nstep < 1 {
		return scale, -mn
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + float32(nmax)) / (mx - mn)
		var sumL, sumL2, sumXL float32
		for i := range x {
			q := max(0, min(nmax, nearestInt(float32(iscale*(x[i]-mn)))))
			laux[i] = uint8(q)
			fl := float32(q)
			wl := float32(w[i] * fl)
			sumL += wl
			sumL2 += float32(wl * fl)
			sumXL += float32(wl * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := range x {
				diff := float32(thisScale*float32(laux[i])) + thisMin - x[i]
				curError += float32(w[i] * float32(diff*diff))
			}
			if curError < bestError {
				copy(l, laux)
				bestError = curError
				scale = thisScale
				mn = thisMin
			}
		}
	}
	return scale, -mn
}

// makeQXQuantsRMSE1 is ggml's make_qx_quants with rmse_type 1 and no
// importance weights (weights x²): symmetric x ≈ scale*(L-nmax) with L in
// [0, 2*nmax), searching 18 candidate scales. It writes L and returns scale.
func makeQXQuantsRMSE1(nmax int, x []float32, l []int8) float32 {
	var mx, amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, mx = a, v
		}
	}
	if amax < groupMaxEps {
		clear(l)
		return 0
	}
	fnmax := float32(nmax)
	iscale := -fnmax / mx
	var sumLX, sumL2 float32
	for i, v := range x {
		q := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
		l[i] = int8(q + nmax)
		w := float32(v * v)
		fl := float32(q)
		sumLX += float32(float32(w*v) * fl)
		sumL2 += float32(float32(w*fl) * fl)
	}
	var scale float32
	if sumL2 != 0 {
		scale = sumLX / sumL2
	}
	best := float32(scale * sumLX)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fnmax + float32(0.1*float32(is))) / mx
		sumLX, sumL2 = 0, 0
		for _, v := range x {
			q := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
			w := float32(v * v)
			fl := float32(q)
			sumLX += float32(float32(w*v) * fl)
			sumL2 += float32(float32(w*fl) * fl)
		}
		if sumL2 > 0 && float32(sumLX*sumLX) > float32(best*sumL2) {
			for i, v := range x {
				q := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
				l[i] = int8(nmax + q)
			}
			scale = sumLX / sumL2
			best = float32(scale * sumLX)
		}
	}
	return scale
}

// quantizeScalesMinsK fits the eight 32-weight sub-blocks of a Q4_K/Q5_K
// super-block (nmax 15 or 31) and packs d, dmin and the 12 scale bytes into
// hdr (16 bytes). It leaves the sub-block fits' quants in l.
func quantizeScalesMinsK(hdr []byte, x []float32, l []uint8, nmax int, rmin float32, nstep int) {
	var weights [32]float32
	var laux [32]uint8
	var scales, mins [8]float32
	var maxScale, maxMin float32
	for j := range 8 {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for i, v := range xs {
			weights[i] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], l[32*j:32*j+32], laux[:], rmin, 0.1, nstep)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := hdr[4:16]
	clear(sc)
	for j := range 8 {
		ls := min(63, uint8(nearestInt(float32(invScale*scales[j]))))
		lm := min(63, uint8(nearestInt(float32(invMin*mins[j]))))
		if j < 4 {
			sc[j] = ls
			sc[j+4] = lm
		} else {
			sc[j+4] = ls&0xF | (lm&0xF)<<4
			sc[j-4] |= (ls >> 4) << 6
			sc[j] |= (lm >> 4) << 6
		}
	}
	putF16(hdr[0:], maxScale/63)
	putF16(hdr[2:], maxMin/63)
	d, dmin := f16At(hdr, 0), f16At(hdr, 2)
	for j := range 8 {
		s, m := scaleMinK4(j, sc)
		dj := float32(d * float32(s))
		if dj == 0 {
			continue
		}
		dm := float32(dmin * float32(m))
		for i := range 32 {
			l[32*j+i] = uint8(max(0, min(nmax, nearestInt((x[32*j+i]+dm)/dj))))
		}
	}
}

// QuantizeQ4_K is ggml's quantize_row_q4_K_ref: per 32-weight sub-block a
// weighted min/scale fit (make_qkx2_quants, nmax 15, 21 steps), the scales
// and mins quantized to 6 bits against d = maxScale/63 and dmin = maxMin/63,
// then every weight requantized against its sub-block's stored scale and min.
func QuantizeQ4_K(dst []byte, x []float32) error {
	nb, err := checkRow(Q4_K, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	var l [256]uint8
	for i := range nb {
		xb, b := x[256*i:256*i+256], dst[144*i:144*i+144]
		quantizeScalesMinsK(b[:16], xb, l[:], 15, -1, 20)
		q := b[16:144]
		for k := range 4 {
			for j := range 32 {
				q[32*k+j] = l[64*k+j] | l[64*k+j+32]<<4
			}
		}
	}
	return nil
}

// QuantizeQ5_K is ggml's quantize_row_q5_K_ref: as Q4_K with nmax 31 and 16
// steps starting at -0.5; the 5th bits go to qh.
func QuantizeQ5_K(dst []byte, x []float32) error {
	nb, err := checkRow(Q5_K, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	var l [256]uint8
	for i := range nb {
		xb, b := x[256*i:256*i+256], dst[176*i:176*i+176]
		quantizeScalesMinsK(b[:16], xb, l[:], 31, -0.5, 15)
		qh, ql := b[16:48], b[48:176]
		clear(qh)
		m1, m2 := uint8(1), uint8(2)
		for k := range 4 {
			for j := range 32 {
				l1, l2 := l[64*k+j], l[64*k+j+32]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				ql[32*k+j] = l1 | l2<<4
			}
			m1 <<= 2
			m2 <<= 2
		}
	}
	return nil
}

// QuantizeQ6_K is ggml's quantize_row_q6_K_ref: per 16-weight sub-block a
// symmetric fit (make_qx_quants, nmax 32, rmse type 1), the scales quantized
// to int8 against d = -maxScale/128, then every weight requantized against
// its sub-block's stored scale.
func QuantizeQ6_K(dst []byte, x []float32) error {
	nb, err := checkRow(Q6_K, len(x), "dst", len(dst))
	if err != nil {
		return err
	}
	var l [256]int8
	var scales [16]float32
	for i := range nb {
		xb, b := x[256*i:256*i+256], dst[210*i:210*i+210]
		var maxScale, maxAbsScale float32
		for ib := range 16 {
			s := makeQXQuantsRMSE1(32, xb[16*ib:16*ib+16], l[16*ib:16*ib+16])
			scales[ib] = s
			if a := abs32(s); a > maxAbsScale {
				maxAbsScale, maxScale = a, s
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(b)
			continue
		}
		iscale := -128 / maxScale
		putF16(b[208:], 1/iscale)
		sc := b[192:208]
		for ib := range 16 {
			sc[ib] = byte(int8(min(127, nearestInt(float32(iscale*scales[ib])))))
		}
		d := f16At(b, 208)
		for j := range 16 {
			dj := float32(d * float32(int8(sc[j])))
			if dj == 0 {
				continue
			}
			for k := range 16 {
				q := max(-32, min(31, nearestInt(xb[16*j+k]/dj)))
				l[16*j+k] = int8(q + 32)
			}
		}
		for h := range 2 {
			ql, qh, lh := b[64*h:64*h+64], b[128+32*h:128+32*h+32], l[128*h:128*h+128]
			for k := range 32 {
				q1, q2, q3, q4 := uint8(lh[k]), uint8(lh[k+32]), uint8(lh[k+64]), uint8(lh[k+96])
				ql[k] = q1&0xF | (q3&0xF)<<4
				ql[k+32] = q2&0xF | (q4&0xF)<<4
				qh[k] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
	return nil
}
