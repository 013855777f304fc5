package quant

import (
	"math"
	"runtime"

	"golang.org/x/sys/cpu"
)

// The float32 association orders of llama.cpp's CPU backend (ggml, v0.5.0),
// which the dot products follow so that rounding matches llama.cpp's bit for
// bit. See docs/ggml-order.md for where each order comes from.
//
//   - Q4_0, Q5_0, Q8_0 (ggml_vec_dot_*_q8_0, AVX2 build, and llamafile's
//     tinyBLAS_Q0_AVX for batches): eight float32 lanes; lane j holds the
//     exact integer sum of the four products at positions 4j..4j+3 of each
//     32-weight block, and accumulates lane_j = fma(dw*da, float32(sum),
//     lane_j) block after block; the lanes are reduced as in hsum8.
//   - Q4_K, Q5_K, Q6_K (ggml_vec_dot_q*_K_q8_K, AVX2 branch): the same eight
//     lanes per 256-weight block (lane j: bytes 4j..4j+3 of every 32-byte run
//     of quants times that run's scale), lane_j = fma(dw*da, float32(sum),
//     lane_j), hsum8; the mins apart (dot_ref_k.go).
//   - Q4_0, Q4_K, Q5_K, Q6_K, Q8_0 in ggml's AMX buffer (rows a multiple
//     of 32, CPU with AMX-INT8): one accumulator, acc = fma(float32(block
//     sum), dw*da, acc) block after block, then for Q4_K/Q5_K
//     acc = fma(-float32(Σ min·bsum), dminw*da, acc).
//   - Q4_K in ggml's CPU_REPACK buffer (q4_K_8x8: rows a multiple of 8,
//     a build with AVX2, AMX not taking the matrix; ggml_gemv_q4_K_8x8_q8_K
//     and ggml_gemm_q4_K_8x8_q8_K, which sum alike): two accumulators,
//     acc = fma(float32(block sum), dw*da, acc) and
//     accm = fma(float32(Σ min·bsum), dminw*da, accm) block after block;
//     the result is acc - accm. The interleaved layout changes where the
//     quants lie, not the sums (exact integers), so the row kernels read
//     the file's blocks as they are.
//   - F16 (ggml_vec_dot_f16) and F32 (ggml_vec_dot_f32): 4·E float32 lanes,
//     E = 16 in ggml's AVX-512 builds and 8 in its AVX2 builds; lane k
//     accumulates fma(x_i, y_i, lane_k) over i ≡ k mod 4E for i below n
//     rounded down to 4E; the lanes are reduced as in reduceF16Lanes. F16
//     then widens to float64 and adds the remaining products (each rounded
//     to float32) in float64; F32 adds them in float32 as dotF32Tail says.

// ggmlAVX512 reports whether ggml loads one of its AVX-512 builds on this
// CPU: they all require AVX-512 F, CD, VL, DQ and BW.
var ggmlAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512CD && cpu.X86.HasAVX512VL &&
	cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512BW

// f16Epr is the float32 elements per vector of ggml's F16 dot product on
// this CPU: 16 in ggml's AVX-512 builds, 8 in its AVX2 builds.
var f16Epr = map[bool]int{true: 16, false: 8}[ggmlAVX512]

// amxOrder reports whether ggml's CPU backend on this machine moves
// Q4_K/Q5_K/Q6_K/Q8_0 matrices whose row count is a multiple of 32 into its
// AMX buffer: ggml loads its sapphirerapids build on a CPU with these
// features, and that build uses the AMX buffer when the kernel grants the
// process the AMX tile state (amxPermitted).
var amxOrder = ggmlAVX512 && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512VNNI &&
	cpu.X86.HasAVX512BF16 && cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 && amxPermitted()

// AMXOrder reports whether DotForMatrix follows ggml's AMX orders on this
// machine (see DotForMatrix).
func AMXOrder() bool { return amxOrder }

// repackOrder reports whether ggml's CPU backend on this machine moves Q4_K
// matrices whose row count is a multiple of 8 (and that AMX does not take)
// into its CPU_REPACK buffer: on x86 it does so in every build compiled
// with AVX2 (ggml_repack_get_optimal_repack_type), the builds it loads on a
// CPU with AVX2 and FMA.
var repackOrder = runtime.GOARCH == "amd64" && cpu.X86.HasAVX2 && cpu.X86.HasFMA

// RepackOrder reports whether DotForMatrix follows ggml's CPU_REPACK order
// for Q4_K on this machine (see DotForMatrix).
func RepackOrder() bool { return repackOrder }

// fma32 returns a*b+c rounded once to float32, as an FMA instruction does.
// The product is exact in float64; the float64 sum is rounded to odd (its
// last bit set when inexact), which makes the final rounding to float32
// correct.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	bb := s - p
	e := (p - (s - bb)) + (float64(c) - bb)
	if e != 0 {
		bits := math.Float64bits(s)
		if bits&1 == 0 {
			if (e > 0) == (s > 0) {
				bits++
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}

// hsum8 reduces eight lanes as ggml's hsum_float_8: lanes k and k+4 first,
// then (l0+l2) + (l1+l3).
func hsum8(l *[8]float32) float32 {
	r0, r1, r2, r3 := l[0]+l[4], l[1]+l[5], l[2]+l[6], l[3]+l[7]
	return (r0 + r2) + (r1 + r3)
}

// reduceF16Lanes reduces the 4·epr lanes of ggml's F16 dot product (lane
// k = vector k/epr, element k%epr): vectors 0+2 and 1+3, then their sum;
// that vector is summed as GCC's _mm512_reduce_add_ps (epr 16: halves,
// quarters, then (v0+v2)+(v1+v3)) or ggml's AVX reduce (epr 8: halves,
// then two horizontal adds, (v0+v1)+(v2+v3)).
func reduceF16Lanes(acc []float32, epr int) float32 {
	var v [16]float32
	for l := range epr {
		v[l] = (acc[l] + acc[2*epr+l]) + (acc[epr+l] + acc[3*epr+l])
	}
	if epr == 16 {
		for l := range 8 {
			v[l] = v[l+8] + v[l]
		}
		for l := range 4 {
			v[l] = v[l+4] + v[l]
		}
		return (v[0] + v[2]) + (v[1] + v[3])
	}
	for l := range 4 {
		v[l] = v[l] + v[l+4]
	}
	return (v[0] + v[1]) + (v[2] + v[3])
}
