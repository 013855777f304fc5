//go:build amd64 && !purego

package quant

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels. They need AVX2 and F16C; x/sys/cpu
// does not report F16C, and every CPU with AVX2 and FMA (Haswell, Zen and
// later) has it, so FMA stands in for it.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// fastName names the Fast kernels of this build: "avx512vnni" when the
// batched kernels use AVX-512 VNNI (useVNNI), else "avx2" or "reference".
var fastName = func() string {
	switch {
	case useVNNI:
		return "avx512vnni"
	case useAVX2:
		return "avx2"
	}
	return "reference"
}()

//go:noescape
func dotQ4KAVX2(w, a *byte, nb, amx int) float32

//go:noescape
func dotQ6KAVX2(w, a *byte, nb, amx int) float32

//go:noescape
func dotQ80AVX2(w, a *byte, nb int) float32

//go:noescape
func quantizeQ8KAVX2(dst *byte, x *float32, nb int) int

// avx2Blocks and avx2AMXBlocks are fastBlocks and fastAMXBlocks without
// the AVX-512 VNNI row kernels: the AVX2 path, kept testable on a CPU that
// has VNNI (see Implementations).
var (
	avx2Blocks    = withBlocks(fastBlocks, map[Type]blockFunc{Q4_K: dotQ4_KAVX2, Q6_K: dotQ6_KAVX2})
	avx2AMXBlocks = withBlocks(fastAMXBlocks, map[Type]blockFunc{Q4_K: dotQ4_KAMXAVX2, Q6_K: dotQ6_KAMXAVX2})
)

// quantizeQ8K encodes whole Q8_K blocks: len(x) = 256*nb, len(dst) = 292*nb.
func quantizeQ8K(dst []byte, x []float32) {
	nb := len(x) / 256
	if !useAVX2 || nb == 0 {
		quantizeQ8KRef(dst, x)
		return
	}
	_ = dst[292*nb-1]
	for i := 0; i < nb; {
		i += quantizeQ8KAVX2(&dst[292*i], &x[256*i], nb-i)
		if i < nb { // a block holding a NaN: the reference loop defines it
			quantizeQ8KRef(dst[292*i:292*i+292], x[256*i:256*i+256])
			i++
		}
	}
}

// dotQ4_K multiplies nb block_q4_K with nb block_q8_K.
func dotQ4_K(w, a []byte, nb int) float32 {
	if useVNNI {
		_, _ = w[144*nb-1], a[292*nb-1]
		return dotQ4KVNNI(&w[0], &a[0], nb, 0)
	}
	return dotQ4_KAVX2(w, a, nb)
}

// dotQ4_KAVX2 is dotQ4_K without the AVX-512 VNNI kernel: the AVX2 path
// (Implementations' "avx2" entry).
func dotQ4_KAVX2(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[144*nb-1], a[292*nb-1]
		return dotQ4KAVX2(&w[0], &a[0], nb, 0)
	}
	return dotQ4_KRef(w, a, nb)
}

// dotQ6_K multiplies nb block_q6_K with nb block_q8_K.
func dotQ6_K(w, a []byte, nb int) float32 {
	if useVNNI {
		_, _ = w[210*nb-1], a[292*nb-1]
		return dotQ6KVNNI(&w[0], &a[0], nb, 0)
	}
	return dotQ6_KAVX2(w, a, nb)
}

// dotQ6_KAVX2 is dotQ6_K without the AVX-512 VNNI kernel: the AVX2 path
// (Implementations' "avx2" entry).
func dotQ6_KAVX2(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[210*nb-1], a[292*nb-1]
		return dotQ6KAVX2(&w[0], &a[0], nb, 0)
	}
	return dotQ6_KRef(w, a, nb)
}

// dotQ8_0 multiplies nb block_q8_0 with nb block_q8_0.
func dotQ8_0(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[34*nb-1], a[34*nb-1]
		return dotQ80AVX2(&w[0], &a[0], nb)
	}
	return dotQ8_0Ref(w, a, nb)
}

//go:noescape
func dotQ40AVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ50AVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ5KAVX2(w, a *byte, nb, amx int) float32

// dotQ4_0 multiplies nb block_q4_0 with nb block_q8_0.
func dotQ4_0(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[18*nb-1], a[34*nb-1]
		return dotQ40AVX2(&w[0], &a[0], nb)
	}
	return dotQ4_0Ref(w, a, nb)
}

// dotQ5_0 multiplies nb block_q5_0 with nb block_q8_0.
func dotQ5_0(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[22*nb-1], a[34*nb-1]
		return dotQ50AVX2(&w[0], &a[0], nb)
	}
	return dotQ5_0Ref(w, a, nb)
}

// dotQ5_K multiplies nb block_q5_K with nb block_q8_K.
func dotQ5_K(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[176*nb-1], a[292*nb-1]
		return dotQ5KAVX2(&w[0], &a[0], nb, 0)
	}
	return dotQ5_KRef(w, a, nb)
}

//go:noescape
func dotF32FMA64AVX2(w, a *byte, n int, acc *[64]float32)

//go:noescape
func dotF32FMA32AVX2(w, a *byte, n int, acc *[64]float32)

//go:noescape
func dotF16FMA64AVX2(w, a *byte, n int, acc *[64]float32)

//go:noescape
func dotF16FMA32AVX2(w, a *byte, n int, acc *[64]float32)

//go:noescape
func dotQ80AMXAVX2(w, a *byte, nb int) float32

//go:noescape
func dotBF16AVX2(w, a *byte, n int, acc *[lanes]float32)

// dotF32 multiplies n little-endian float32 with n float32 in ggml's F32
// order: the assembly fills the lanes over whole steps of 4*f16Epr elements.
func dotF32(w, a []byte, n int) float32 {
	step := 4 * f16Epr
	m := n - n%step
	if !useAVX2 || m == 0 {
		return dotF32Ref(w, a, n)
	}
	_, _ = w[4*n-1], a[4*n-1]
	var acc [64]float32
	if step == 64 {
		dotF32FMA64AVX2(&w[0], &a[0], m, &acc)
	} else {
		dotF32FMA32AVX2(&w[0], &a[0], m, &acc)
	}
	return dotF32Tail(acc[:step], f16Epr, w, a, m, n)
}

// dotF16 multiplies n binary16 with n binary16 in ggml's F16 order: the
// assembly fills the lanes over whole steps of 4*f16Epr elements.
func dotF16(w, a []byte, n int) float32 {
	step := 4 * f16Epr
	m := n - n%step
	if !useAVX2 || m == 0 {
		return dotF16Ref(w, a, n)
	}
	_, _ = w[2*n-1], a[2*n-1]
	var acc [64]float32
	if step == 64 {
		dotF16FMA64AVX2(&w[0], &a[0], m, &acc)
	} else {
		dotF16FMA32AVX2(&w[0], &a[0], m, &acc)
	}
	return dotF16Tail(acc[:step], f16Epr, w, a, m, n)
}

// dotBF16 multiplies n bfloat16 with n bfloat16.
func dotBF16(w, a []byte, n int) float32 {
	var acc [lanes]float32
	m := n &^ (lanes - 1)
	if useAVX2 && m > 0 {
		_, _ = w[2*n-1], a[2*n-1]
		dotBF16AVX2(&w[0], &a[0], m, &acc)
	} else {
		m = 0
	}
	return dotBF16Tail(&acc, w, a, m, n)
}

//go:noescape
func dotQ41AVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ51AVX2(w, a *byte, nb int) float32

// dotQ4_1 multiplies nb block_q4_1 with nb block_q8_1.
func dotQ4_1(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[20*nb-1], a[36*nb-1]
		return dotQ41AVX2(&w[0], &a[0], nb)
	}
	return dotQ4_1Ref(w, a, nb)
}

// dotQ5_1 multiplies nb block_q5_1 with nb block_q8_1.
func dotQ5_1(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[24*nb-1], a[36*nb-1]
		return dotQ51AVX2(&w[0], &a[0], nb)
	}
	return dotQ5_1Ref(w, a, nb)
}

// dotQ8_0AMX multiplies nb block_q8_0 with nb block_q8_0 in ggml's AMX order.
func dotQ8_0AMX(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[34*nb-1], a[34*nb-1]
		return dotQ80AMXAVX2(&w[0], &a[0], nb)
	}
	return dotQ8_0AMXRef(w, a, nb)
}

// dotQ4_KAMX multiplies nb block_Q4_K with nb block_q8_K in ggml's AMX order.
func dotQ4_KAMX(w, a []byte, nb int) float32 {
	if useVNNI {
		_, _ = w[144*nb-1], a[292*nb-1]
		return dotQ4KVNNI(&w[0], &a[0], nb, 1)
	}
	return dotQ4_KAMXAVX2(w, a, nb)
}

// dotQ4_KAMXAVX2 is dotQ4_KAMX without the AVX-512 VNNI kernel: the AVX2 path
// (Implementations' "avx2" entry).
func dotQ4_KAMXAVX2(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[144*nb-1], a[292*nb-1]
		return dotQ4KAVX2(&w[0], &a[0], nb, 1)
	}
	return dotQ4_KAMXRef(w, a, nb)
}

// dotQ6_KAMX multiplies nb block_Q6_K with nb block_q8_K in ggml's AMX order.
func dotQ6_KAMX(w, a []byte, nb int) float32 {
	if useVNNI {
		_, _ = w[210*nb-1], a[292*nb-1]
		return dotQ6KVNNI(&w[0], &a[0], nb, 1)
	}
	return dotQ6_KAMXAVX2(w, a, nb)
}

// dotQ6_KAMXAVX2 is dotQ6_KAMX without the AVX-512 VNNI kernel: the AVX2 path
// (Implementations' "avx2" entry).
func dotQ6_KAMXAVX2(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[210*nb-1], a[292*nb-1]
		return dotQ6KAVX2(&w[0], &a[0], nb, 1)
	}
	return dotQ6_KAMXRef(w, a, nb)
}

// dotQ5_KAMX multiplies nb block_Q5_K with nb block_q8_K in ggml's AMX order.
func dotQ5_KAMX(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[176*nb-1], a[292*nb-1]
		return dotQ5KAVX2(&w[0], &a[0], nb, 1)
	}
	return dotQ5_KAMXRef(w, a, nb)
}

// dotQ4_KRepack multiplies nb block_q4_K with nb block_q8_K in ggml's
// CPU_REPACK order (mode 2 of the AVX2 kernel; no VNNI kernel yet).
func dotQ4_KRepack(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[144*nb-1], a[292*nb-1]
		return dotQ4KAVX2(&w[0], &a[0], nb, int(orderRepack))
	}
	return dotQ4_KRepackRef(w, a, nb)
}

//go:noescape
func dotQ40AMXAVX2(w, a *byte, nb int) float32

// dotQ4_0AMX multiplies nb block_q4_0 with nb block_q8_0 in ggml's AMX order.
func dotQ4_0AMX(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[18*nb-1], a[34*nb-1]
		return dotQ40AMXAVX2(&w[0], &a[0], nb)
	}
	return dotQ4_0AMXRef(w, a, nb)
}

//go:noescape
func dotQ4KAVX2x4(out *[4]float32, w, a *byte, stride, nb, amx int)

//go:noescape
func dotQ6KAVX2x4(out *[4]float32, w, a *byte, stride, nb, amx int)

//go:noescape
func dotQ80AVX2x4(out *[4]float32, w, a *byte, stride, nb, amx int)

// hasFour reports whether dotFour has a kernel for t in order o: Q4_K,
// Q6_K and Q8_0 with AVX2, and with vnni set those hasFourVNNI names.
func hasFour(t Type, o order, vnni bool) bool {
	return useAVX2 && (t == Q4_K || t == Q6_K || t == Q8_0) || vnni && hasFourVNNI(t, o)
}

// dotFour sets out[c], c = 0..3, to nb blocks of type t (one of hasFour's)
// at w times the nb activation blocks at a[c*as:], each with the bits of
// the row kernel of order o: Kernels.Dot, Kernels.DotAMX or (Q4_K only)
// Kernels.DotRepack. The AVX2 kernels' mode argument is o (0, 1, 2); with
// vnni set, the AVX-512 VNNI kernel takes the types and orders
// hasFourVNNI names.
func dotFour(t Type, o order, vnni bool, out *[4]float32, w, a []byte, as, nb int) {
	x := int(o)
	if o == orderRepack && t != Q4_K {
		panic("quant: no repack-order four-vector kernel for " + t.String())
	}
	switch t {
	case Q4_K:
		_, _ = w[144*nb-1], a[3*as+292*nb-1]
		dotQ4KAVX2x4(out, &w[0], &a[0], as, nb, x)
	case Q6_K:
		_, _ = w[210*nb-1], a[3*as+292*nb-1]
		if vnni && hasFourVNNI(t, o) {
			dotFourVNNI(t, out, w, a, as, nb)
			return
		}
		dotQ6KAVX2x4(out, &w[0], &a[0], as, nb, x)
	case Q5_K:
		if !vnni || !hasFourVNNI(t, o) {
			panic("quant: no four-vector kernel for " + t.String() + " in this order")
		}
		_, _ = w[176*nb-1], a[3*as+292*nb-1]
		dotFourVNNI(t, out, w, a, as, nb)
	case Q8_0:
		_, _ = w[34*nb-1], a[3*as+34*nb-1]
		if vnni && hasFourVNNI(t, o) {
			dotFourVNNI(t, out, w, a, as, nb)
			return
		}
		dotQ80AVX2x4(out, &w[0], &a[0], as, nb, x)
	case Q4_0:
		if !vnni || !hasFourVNNI(t, o) {
			panic("quant: no four-vector kernel for " + t.String() + " in this order")
		}
		_, _ = w[18*nb-1], a[3*as+34*nb-1]
		dotFourVNNI(t, out, w, a, as, nb)
	default:
		panic("quant: no four-vector kernel for " + t.String())
	}
}

//go:noescape
func dotPanelQ4KAVX2x4(out *[4][8]float32, p, a *byte, as, nb int)

//go:noescape
func dotPanelQ4KAVX2x2(out *[4][8]float32, p, a *byte, as, nb int)

//go:noescape
func dotPanelQ4KAVX2x1(out *[8]float32, p, a *byte, nb int)

// hasPanelFour reports whether panelBlocksFast (and panelBlocksAVX2)
// computes four vectors in one call.
var hasPanelFour = useAVX2

// panelBlocksFast is the build's panel kernel (see panelBlocks): with
// AVX-512 VNNI panelBlocksVNNI, else panelBlocksAVX2.
func panelBlocksFast(out *[4][8]float32, panel, a []byte, as, nb, cols int) {
	if useVNNI {
		panelBlocksVNNI(out, panel, a, as, nb, cols)
		return
	}
	panelBlocksAVX2(out, panel, a, as, nb, cols)
}

// panelBlocksAVX2 is the AVX2 panel kernel: four vectors in one call, two
// in another, one in a third (the reference loops without AVX2).
func panelBlocksAVX2(out *[4][8]float32, panel, a []byte, as, nb, cols int) {
	if !useAVX2 {
		panelBlocksRef(out, panel, a, as, nb, cols)
		return
	}
	_ = panel[nb*PanelBlockSize-1]
	c := 0
	switch {
	case cols == 4:
		_ = a[3*as+292*nb-1]
		dotPanelQ4KAVX2x4(out, &panel[0], &a[0], as, nb)
		return
	case cols >= 2:
		_ = a[as+292*nb-1]
		dotPanelQ4KAVX2x2(out, &panel[0], &a[0], as, nb)
		c = 2
	}
	for ; c < cols; c++ {
		_ = a[c*as+292*nb-1]
		dotPanelQ4KAVX2x1(&out[c], &panel[0], &a[c*as], nb)
	}
}

//go:noescape
func f32ToF16x8(dst *byte, src *float32, octs int)

// f32ToF16Vec converts the first n (a multiple of 8) values of src into
// dst and returns how many it did: n, or 0 without AVX2/F16C.
func f32ToF16Vec(dst []byte, src []float32) int {
	n := len(src) &^ 7
	if !useAVX2 || n == 0 {
		return 0
	}
	_, _ = dst[2*n-1], src[n-1]
	f32ToF16x8(&dst[0], &src[0], n/8)
	return n
}
