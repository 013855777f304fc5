package model

import (
	"encoding/binary"
	"math"

	"golang.org/x/sys/cpu"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// This file reproduces the float association order of the ggml CPU code
// that llama.cpp runs for attention and the SwiGLU activation, so that the
// logits track llama.cpp's on the same machine (a one-ulp difference can
// flip an activation's Q8 rounding and then persists in the KV cache).
//
// ggml's x86 builds work in SIMD vectors of 16 f32 lanes (AVX-512 builds)
// or 8 (AVX2 builds); llama.cpp loads the AVX-512 build where the CPU has
// AVX-512F and DQ. simdWidth is chosen the same way. Within a vector every
// lane accumulates its own elements in order; vectors are then added in a
// fixed tree. Products of two f16 values are exact in f32, so ggml's fused
// multiply-adds there round like an add.

// simd describes one ggml build's vector shape.
type simd struct {
	lanes int // f32 lanes per vector: 16 (AVX-512) or 8 (AVX2)
}

// simdWidth is the shape of the ggml build llama.cpp picks on this CPU.
var simdWidth = detectSIMD()

func detectSIMD() simd {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ {
		return simd{lanes: 16}
	}
	return simd{lanes: 8}
}

// f16Table maps every f16 bit pattern to its (exact) f32 value.
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = quant.F16ToF32(uint16(i))
	}
	return &t
}()

// f16At reads the f16 at element i of b.
func f16At(b []byte, i int) float32 { return f16Table[binary.LittleEndian.Uint16(b[2*i:])] }

// roundF16 rounds x to the nearest f16 value, as an f32.
func roundF16(x float32) float32 { return f16Table[quant.F32ToF16(x)] }

// roundF16s sets dst[i] = roundF16(src[i]) (dst may be src), eight at a
// time in assembly where the build has it.
func roundF16s(dst, src []float32) {
	dst = dst[:len(src)]
	copy(dst, src)
	for i := roundF16Vec(dst); i < len(dst); i++ {
		dst[i] = roundF16(dst[i])
	}
}

// dotF16 is ggml_vec_dot_f16 of n f16 values x with n values y that are
// already f16-representable (ggml converts that side to f16 first): four
// vectors of lanes accumulate the first n rounded down to 4*lanes elements,
// the vectors are reduced, and the rest is added one by one in float64.
//
// When padded is true the dot is taken as ggml takes it over a KV cache
// padded to a multiple of 256 positions with zero probabilities: every
// element goes through the vectors and there is no tail.
func (s simd) dotF16(x []byte, y []float32, n int, padded bool) float32 {
	l := s.lanes
	step := 4 * l
	np := n - n%step
	if padded {
		np = n
	}
	x, y = x[:2*n], y[:n]
	// The vectors and their reduction in assembly where there is some.
	vsum, ok := dotF16Sum(l, x, y, np)
	if !ok {
		var acc [4][16]float32
		for i := 0; i < np; i += l {
			a := &acc[(i/l)&3]
			m := min(l, np-i)
			xs, ys := x[2*i:2*(i+m)], y[i:i+m]
			for k, yk := range ys {
				a[k] += f16Table[uint16(xs[2*k])|uint16(xs[2*k+1])<<8] * yk
			}
		}
		vsum = s.reduceVectors(&acc)
	}
	sum := float64(vsum)
	for i := np; i < n; i++ {
		sum += float64(f16At(x, i) * y[i])
	}
	return float32(sum)
}

// dotF16Rows sets out[r] = s.dotF16(x[r*xstride:], y, n, padded) for every
// r < len(out), bit for bit, in one assembly call where the build has one
// and n needs no scalar tail (padded, or n a multiple of 4*lanes); pad is
// the caller's scratch for the rows' partial vectors.
func (s simd) dotF16Rows(out []float32, x []byte, xstride int, y []float32, n int, padded bool, pad *f16Pad) {
	if (padded || n%(4*s.lanes) == 0) && dotF16Rows(s.lanes, out, x, xstride, y, n, len(out), pad) {
		return
	}
	for r := range out {
		out[r] = s.dotF16(x[r*xstride:], y, n, padded)
	}
}

// dotF16RowsBatch sets out[r] to the product of row r of x (n f16 values,
// rows xstride bytes apart) with y (n f16-representable values) in
// llamafile's tinyBLAS order, which ggml's mul_mat takes for attention's
// F16 products in a batch of two or more tokens (see attendHead): one
// accumulator of lanes lanes per row, lane l adding x_i*y_i (exact) for
// i ≡ l mod lanes in order, then tinyBLAS's hsum (reduceTiny). Elements
// past n count as zeros (a partial last vector is zero-padded), as ggml's
// masked positions of zero probability do.
func (s simd) dotF16RowsBatch(out []float32, x []byte, xstride int, y []float32, n int, pad *f16Pad) {
	if len(out) == 0 {
		return
	}
	if dotF16RowsBatchAsm(s.lanes, out, x, xstride, y, n, pad) {
		return
	}
	l := s.lanes
	y = y[:n]
	for r := range out {
		var acc [16]float32
		row := x[r*xstride : r*xstride+2*n]
		for i, yi := range y {
			acc[i%l] += f16Table[uint16(row[2*i])|uint16(row[2*i+1])<<8] * yi
		}
		out[r] = reduceTiny(&acc, l)
	}
}

// reduceTiny is tinyBLAS's hsum of one accumulator: 16 lanes as
// _mm512_reduce_add_ps (lanes l and l+8, l and l+4, then (v0+v2)+(v1+v3)),
// 8 lanes as hsum(__m256) (l and l+4, then the same pairs).
func reduceTiny(acc *[16]float32, lanes int) float32 {
	var v [8]float32
	copy(v[:], acc[:8])
	if lanes == 16 {
		for i := range v {
			v[i] += acc[i+8]
		}
	}
	r0, r1, r2, r3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (r0 + r2) + (r1 + r3)
}

// reduceVectors is GGML_F32x16_REDUCE / GGML_F32x8_REDUCE over four
// accumulator vectors: v0+v2, v1+v3, then their sum, then the lanes.
func (s simd) reduceVectors(acc *[4][16]float32) float32 {
	var v [16]float32
	for i := range s.lanes {
		v[i] = (acc[0][i] + acc[2][i]) + (acc[1][i] + acc[3][i])
	}
	if s.lanes == 16 {
		return reduceAdd16(&v)
	}
	// AVX2: halves added, then two horizontal adds.
	t0, t1, t2, t3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (t0 + t1) + (t2 + t3)
}

// reduceAdd16 is _mm512_reduce_add_ps: halves, quarters, then pairs.
func reduceAdd16(v *[16]float32) float32 {
	var a [8]float32
	for i := range a {
		a[i] = v[i] + v[i+8]
	}
	b0, b1, b2, b3 := a[0]+a[4], a[1]+a[5], a[2]+a[6], a[3]+a[7]
	return (b0 + b2) + (b1 + b3)
}

// reduceAdd8Softmax is the AVX2 horizontal sum in ggml_vec_soft_max_f32.
func reduceAdd8Softmax(v []float32) float32 {
	t0, t1, t2, t3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (t0 + t2) + (t1 + t3)
}

// softmax turns w[:n] (scaled scores) into probabilities in place as
// ggml_soft_max_ext does over a padded cache: each vector of lanes takes
// ggml_v_expf(w - max) and adds its horizontal sum to a float64 total; the
// values are then multiplied by f32(1/total).
func (s simd) softmax(w []float32) {
	maxW := float32(math.Inf(-1))
	for _, v := range w {
		maxW = max(maxW, v)
	}
	l := s.lanes
	var sum float64
	var chunk [16]float32
	i0 := 0
	if l == 8 {
		i0, sum = expSumVec8(w, maxW)
	}
	for i := i0; i < len(w); i += l {
		clear(chunk[:])
		for j := range min(l, len(w)-i) {
			e := s.expf(w[i+j] - maxW)
			w[i+j] = e
			chunk[j] = e
		}
		if l == 16 {
			sum += float64(reduceAdd16(&chunk))
		} else {
			sum += float64(reduceAdd8Softmax(chunk[:8]))
		}
	}
	inv := float32(1 / sum)
	for i := range w {
		w[i] *= inv
	}
}

// probs turns attention's scores w into its probabilities in place, as
// llama.cpp's graph does (soft_max_ext with the scale, then the f16
// conversion of the probabilities for the value products): w[i] =
// roundF16(softmax(w * scale)[i]), softmax as s.softmax sums. scale > 0,
// so that masked scores (-Inf) stay masked. One AVX-512 call for 16-lane
// builds (probsVec), the same bits.
func (s simd) probs(w []float32, scale float32) {
	if s.lanes == 16 && probsVec(w, scale) {
		return
	}
	for i := range w {
		w[i] *= scale
	}
	s.softmax(w)
	roundF16s(w, w)
}

// swiglu writes h[i] = silu(gate[i]) * up[i] as ggml_vec_swiglu_f32 does:
// whole vectors use ggml_v_silu (x / (1 + ggml_v_expf(-x))), the tail the
// scalar x / (1 + expf(-x)) with glibc's expf. h may alias gate or up.
func (s simd) swiglu(h, gate, up []float32) {
	n := len(gate)
	nv := n - n%s.lanes
	i0 := 0
	if s.lanes == 16 {
		i0 = swigluVec(h, gate, up, nv)
	} else {
		i0 = swigluVec8(h, gate, up, nv)
	}
	for i := i0; i < nv; i++ {
		g := gate[i]
		h[i] = g / (1 + s.expf(0-g)) * up[i]
	}
	for i := nv; i < n; i++ {
		g := gate[i]
		h[i] = g / (1 + glibcExpf(-g)) * up[i]
	}
}

// scalef is vscalefps for |n| <= 192: j * 2^n rounded once to f32. 2^n is
// then a normal float64 and the float64 product is exact, so this is
// float32(math.Ldexp(float64(j), n)) without Ldexp's slow general path.
func scalef(j float32, n int) float32 {
	return float32(float64(j) * math.Float64frombits(uint64(1023+n)<<52))
}

// fma32 is a fused f32 multiply-add (rounded once, through float64: exact
// for the products here, which have at most 48 significant bits).
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// expf is one lane of ggml_v_expf for this build's vector width.
func (s simd) expf(x float32) float32 {
	const (
		r     = 0x1.8p23
		log2e = 0x1.715476p+0
		ln2hi = 0x1.62e4p-1
		ln2lo = 0x1.7f7d1cp-20
		c1    = 0x1.0e4020p-7
		c2    = 0x1.573e2ep-5
		c3    = 0x1.555e66p-3
		c4    = 0x1.fffdb6p-2
		c5    = 0x1.ffffecp-1
	)
	z := fma32(x, log2e, r)
	n := z - r
	b := fma32(-n, ln2lo, fma32(-n, ln2hi, x))
	u := b * b
	absN := float32(math.Abs(float64(n)))
	if s.lanes == 16 {
		j := fma32(fma32(fma32(c1, b, c2), u, fma32(c3, b, c4)), u, fma32(c5, b, 1))
		if absN > 192 || n != n {
			if n <= 0 {
				return 0
			}
			return float32(math.Inf(1))
		}
		return scalef(j, int(n))
	}
	// AVX2: 2^n built in the exponent bits of z.
	e := math.Float32bits(z) << 23
	k := math.Float32frombits(e + math.Float32bits(1))
	j := fma32(fma32(fma32(c1, b, c2), u, fma32(c3, b, c4)), u, c5*b)
	if !(absN > 126) {
		return fma32(j, k, k)
	}
	var g uint32
	if n <= 0 {
		g = 0x82000000
	}
	s1 := math.Float32frombits(g + 0x7f000000)
	s2 := math.Float32frombits(e - g)
	if absN > 192 {
		return s1 * s1
	}
	return fma32(s2, j, s2) * s1
}
