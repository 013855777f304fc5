//go:build amd64 && !purego

package quant

import "golang.org/x/sys/cpu"

// useVNNI selects the 512-bit Q4_K and Q6_K kernels, row and eight-vector
// (dot_k_vnni_amd64.s, dot_k_vnni_amx_amd64.s), the Q5_K eight-vector and
// the Q5_K and Q6_K four-vector kernels (dot_k_vnni_amd64.s), the Q8_0 and
// Q4_0 eight- and four-vector kernels (dot_q8_vnni_amd64.s), and the Q4_K
// panel kernels (dot_panel_vnni_amd64.s): they need the AVX2 kernels'
// features plus AVX-512 F, BW and VL (512-bit byte and word operations)
// and AVX-512 VNNI (VPDPWSSD, VPDPBUSD). x/sys/cpu reports
// AVX-512 only when the OS saves the 512-bit register state.
var useVNNI = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW &&
	cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// The plain-order eight-vector Q4_K kernel (dot_k_vnni_amd64.s) writes
// acc[0:96]; it reads none of it.
//
//go:noescape
func dotQ4KVNNIx8(acc *float32, w, a *byte, stride, nb int)

// The plain-order eight- and four-vector Q6_K kernels (dot_k_vnni_amd64.s)
// write out[0:8] or out[0:4], each vector's eight float32 lanes reduced in
// registers as hsum8 does (dotQ6KAVX2's end).
//
//go:noescape
func dotQ6KVNNIx8(out *float32, w, a *byte, stride, nb int)

// The plain-order eight-vector Q5_K kernel (dot_k_vnni_amd64.s) writes
// acc[0:72]: the eight float32 lanes of each vector, then each vector's
// mins term; it reads none of it.
//
//go:noescape
func dotQ5KVNNIx8(acc *float32, w, a *byte, stride, nb int)

//go:noescape
func dotQ6KVNNIx4(out *float32, w, a *byte, stride, nb int)

// The plain-order Q8_0 and Q4_0 kernels (dot_q8_vnni_amd64.s) write
// acc[0:64] (eight vectors) or acc[0:32] (four): each vector's eight
// float32 lanes; they read none of it.
//
//go:noescape
func dotQ80VNNIx8(acc *float32, w, a *byte, stride, nb int)

//go:noescape
func dotQ80VNNIx4(acc *float32, w, a *byte, stride, nb int)

//go:noescape
func dotQ40VNNIx8(acc *float32, w, a *byte, stride, nb int)

//go:noescape
func dotQ40VNNIx4(acc *float32, w, a *byte, stride, nb int)

// The plain-order four-vector Q5_K kernel (dot_k_vnni_amd64.s) writes
// acc[0:36]: the eight float32 lanes of each vector, then each vector's
// mins term; it reads none of it.
//
//go:noescape
func dotQ5KVNNIx4(acc *float32, w, a *byte, stride, nb int)

// hasFourVNNI reports whether dotFour has an AVX-512 VNNI kernel for t in
// order o on this CPU: Q5_K, Q6_K, Q8_0 and Q4_0 in the plain order.
func hasFourVNNI(t Type, o order) bool {
	return useVNNI && o == orderPlain && (t == Q5_K || t == Q6_K || t == Q8_0 || t == Q4_0)
}

// dotFourVNNI is dotFour's AVX-512 VNNI kernel for one of hasFourVNNI's
// types in the plain order (bounds checked by dotFour): Q6_K's reduces
// its float32 lanes in registers; the others leave the row kernel's lanes
// (and Q5_K's mins term), reduced here as the row kernel ends (hsum8, then
// Q5_K's mins term).
func dotFourVNNI(t Type, out *[4]float32, w, a []byte, as, nb int) {
	if t == Q6_K {
		dotQ6KVNNIx4(&out[0], &w[0], &a[0], as, nb)
		return
	}
	var acc [36]float32
	switch t {
	case Q5_K:
		dotQ5KVNNIx4(&acc[0], &w[0], &a[0], as, nb)
		for c := range out {
			out[c] = hsum8((*[8]float32)(acc[8*c:])) + acc[32+c]
		}
		return
	case Q8_0:
		dotQ80VNNIx4(&acc[0], &w[0], &a[0], as, nb)
	case Q4_0:
		dotQ40VNNIx4(&acc[0], &w[0], &a[0], as, nb)
	default:
		panic("quant: no four-vector VNNI kernel for " + t.String())
	}
	for c := range out {
		out[c] = hsum8((*[8]float32)(acc[8*c:]))
	}
}

// The AMX-order eight-vector kernels (dot_k_vnni_amx_amd64.s) write
// out[0:8].
//
//go:noescape
func dotQ4KVNNIx8AMX(out *float32, w, a *byte, stride, nb int)

//go:noescape
func dotQ6KVNNIx8AMX(out *float32, w, a *byte, stride, nb int)

// The row kernels (dot_k_vnni_amd64.s) take dotQ4KAVX2's and dotQ6KAVX2's
// arguments and give their bits.
//
//go:noescape
func dotQ4KVNNI(w, a *byte, nb, amx int) float32

//go:noescape
func dotQ6KVNNI(w, a *byte, nb, amx int) float32

// hasEight reports whether dotEight has a kernel for t in order o on this
// CPU: with AVX-512 VNNI, Q4_K and Q6_K in the plain and AMX orders, Q5_K,
// Q8_0 and Q4_0 in the plain order.
func hasEight(t Type, o order) bool {
	switch {
	case !useVNNI:
		return false
	case t == Q4_K || t == Q6_K:
		return o == orderPlain || o == orderAMX
	case t == Q5_K || t == Q8_0 || t == Q4_0:
		return o == orderPlain
	}
	return false
}

// dotEight sets out[c], c = 0..7, to nb blocks of type t (one of
// hasEight's) at w times the nb activation blocks at a[c*as:], each with
// the bits of the row kernel of Kernels.Dot (amx false) or Kernels.DotAMX
// (amx true). The AMX-order kernels write the results; the plain-order
// ones leave the row kernel's float32 lanes (see dot_k_vnni_amd64.s),
// reduced here in the row kernel's order.
func dotEight(t Type, o order, out *[8]float32, w, a []byte, as, nb int) {
	if o == orderAMX {
		switch t {
		case Q4_K:
			_, _ = w[144*nb-1], a[7*as+292*nb-1]
			dotQ4KVNNIx8AMX(&out[0], &w[0], &a[0], as, nb)
		case Q6_K:
			_, _ = w[210*nb-1], a[7*as+292*nb-1]
			dotQ6KVNNIx8AMX(&out[0], &w[0], &a[0], as, nb)
		default:
			panic("quant: no eight-vector kernel for " + t.String())
		}
		return
	}
	if t == Q6_K {
		_, _ = w[210*nb-1], a[7*as+292*nb-1]
		dotQ6KVNNIx8(&out[0], &w[0], &a[0], as, nb)
		return
	}
	var acc [96]float32
	switch t {
	case Q4_K:
		_, _ = w[144*nb-1], a[7*as+292*nb-1]
		dotQ4KVNNIx8(&acc[0], &w[0], &a[0], as, nb)
		for c := range out { // dotQ4KAVX2's end: hsum8, then the mins
			m := acc[64+8*(c/2)+2*(c%2):]
			out[c] = hsum8((*[8]float32)(acc[8*c:])) + ((m[0] + m[4]) + (m[1] + m[5]))
		}
	case Q8_0, Q4_0:
		_, _ = w[t.TypeSize()*nb-1], a[7*as+34*nb-1]
		if t == Q8_0 {
			dotQ80VNNIx8(&acc[0], &w[0], &a[0], as, nb)
		} else {
			dotQ40VNNIx8(&acc[0], &w[0], &a[0], as, nb)
		}
		for c := range out {
			out[c] = hsum8((*[8]float32)(acc[8*c:]))
		}
	case Q5_K: // dotQ5KAVX2's end: hsum8, then the mins term
		_, _ = w[176*nb-1], a[7*as+292*nb-1]
		dotQ5KVNNIx8(&acc[0], &w[0], &a[0], as, nb)
		for c := range out {
			out[c] = hsum8((*[8]float32)(acc[8*c:])) + acc[64+c]
		}
	default:
		panic("quant: no eight-vector kernel for " + t.String())
	}
}

// The panel kernels (dot_panel_vnni_amd64.s, written by gen_panel.go) set
// out[c], c < 4, 2 or 1, to the panel's eight rows times vector c (at
// a + c*as) over nb blocks, with the AVX2 panel kernels' bits.
//
//go:noescape
func dotPanelQ4KVNNIx4(out *[4][8]float32, p, a *byte, as, nb int)

//go:noescape
func dotPanelQ4KVNNIx2(out *[4][8]float32, p, a *byte, as, nb int)

//go:noescape
func dotPanelQ4KVNNIx1(out *[4][8]float32, p, a *byte, as, nb int)

// panelBlocksVNNI is panelBlocksAVX2 with the AVX-512 VNNI kernels: four
// vectors in one call, two in another, one in a third.
func panelBlocksVNNI(out *[4][8]float32, panel, a []byte, as, nb, cols int) {
	_ = panel[nb*PanelBlockSize-1]
	switch {
	case cols == 4:
		_ = a[3*as+292*nb-1]
		dotPanelQ4KVNNIx4(out, &panel[0], &a[0], as, nb)
	case cols >= 2:
		_ = a[as+292*nb-1]
		dotPanelQ4KVNNIx2(out, &panel[0], &a[0], as, nb)
		if cols == 3 {
			var o [4][8]float32
			_ = a[2*as+292*nb-1]
			dotPanelQ4KVNNIx1(&o, &panel[0], &a[2*as], as, nb)
			out[2] = o[0]
		}
	default:
		_ = a[292*nb-1]
		dotPanelQ4KVNNIx1(out, &panel[0], &a[0], as, nb)
	}
}
