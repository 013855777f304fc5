//go:build amd64 && !purego

package q4k

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels. They need AVX2 and F16C; x/sys/cpu
// does not report F16C, and every CPU with AVX2 and FMA (Haswell, Zen and
// later) has it, so FMA stands in for it.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// fastName names the Fast kernels of this build.
var fastName = map[bool]string{true: "avx2", false: "reference"}[useAVX2]

//go:noescape
func dotQ4KAVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ6KAVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ80AVX2(w, a *byte, nb int) float32

//go:noescape
func quantizeQ8KAVX2(dst *byte, x *float32, nb int) int

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
	if useAVX2 {
		_, _ = w[144*nb-1], a[292*nb-1]
		return dotQ4KAVX2(&w[0], &a[0], nb)
	}
	return dotQ4_KRef(w, a, nb)
}

// dotQ6_K multiplies nb block_q6_K with nb block_q8_K.
func dotQ6_K(w, a []byte, nb int) float32 {
	if useAVX2 {
		_, _ = w[210*nb-1], a[292*nb-1]
		return dotQ6KAVX2(&w[0], &a[0], nb)
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
func dotQ5KAVX2(w, a *byte, nb int) float32

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
		return dotQ5KAVX2(&w[0], &a[0], nb)
	}
	return dotQ5_KRef(w, a, nb)
}

//go:noescape
func dotF32AVX2(w, a *byte, n int, acc *[lanes]float32)

//go:noescape
func dotF16AVX2(w, a *byte, n int, acc *[lanes]float32)

//go:noescape
func dotBF16AVX2(w, a *byte, n int, acc *[lanes]float32)

// dotF32 multiplies n little-endian float32 with n float32.
func dotF32(w, a []byte, n int) float32 {
	var acc [lanes]float32
	m := n &^ (lanes - 1)
	if useAVX2 && m > 0 {
		_, _ = w[4*n-1], a[4*n-1]
		dotF32AVX2(&w[0], &a[0], m, &acc)
	} else {
		m = 0
	}
	return dotF32Tail(&acc, w, a, m, n)
}

// dotF16 multiplies n binary16 with n binary16.
func dotF16(w, a []byte, n int) float32 {
	var acc [lanes]float32
	m := n &^ (lanes - 1)
	if useAVX2 && m > 0 {
		_, _ = w[2*n-1], a[2*n-1]
		dotF16AVX2(&w[0], &a[0], m, &acc)
	} else {
		m = 0
	}
	return dotF16Tail(&acc, w, a, m, n)
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
func dotQ4KAVX2x4(dst *float32, w, a *byte, stride, nb int)

//go:noescape
func dotQ6KAVX2x4(dst *float32, w, a *byte, stride, nb int)

//go:noescape
func dotQ80AVX2x4(dst *float32, w, a *byte, stride, nb int)

// hasFour reports whether dotFour has a kernel for t: Q4_K, Q6_K and Q8_0
// with AVX2.
func hasFour(t Type) bool { return useAVX2 && (t == Q4_K || t == Q6_K || t == Q8_0) }

// dotFour sets out to nb blocks of type t (one of hasFour's) times the four
// nb-block activation vectors (Q8_K, or Q8_0 for Q8_0) at a, a+as, a+2*as
// and a+3*as.
func dotFour(t Type, out *[4]float32, w, a []byte, as, nb int) {
	switch t {
	case Q4_K:
		_, _ = w[144*nb-1], a[3*as+292*nb-1]
		dotQ4KAVX2x4(&out[0], &w[0], &a[0], as, nb)
	case Q6_K:
		_, _ = w[210*nb-1], a[3*as+292*nb-1]
		dotQ6KAVX2x4(&out[0], &w[0], &a[0], as, nb)
	case Q8_0:
		_, _ = w[34*nb-1], a[3*as+34*nb-1]
		dotQ80AVX2x4(&out[0], &w[0], &a[0], as, nb)
	default:
		panic("q4k: no four-vector kernel for " + t.String())
	}
}
