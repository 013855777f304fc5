// Package quant implements ggml's tensor block formats on the CPU: the layouts,
// dequantization to float32, the reference quantizers, and the row dot
// products a matrix-vector product is built from. It is a leaf: it imports
// nothing from this project.
//
// # Types and block layouts
//
// A tensor row of n weights is stored as n/BlockSize blocks of TypeSize bytes,
// little-endian, blocks back to back (see [Type.RowSize]). "f16" is IEEE
// binary16, "bf16" is the top half of an IEEE binary32.
//
//	F32   4 bytes per weight.
//	F16   2 bytes per weight (IEEE binary16).
//	BF16  2 bytes per weight (bfloat16: the high 16 bits of a float32).
//	Q4_0  block_q4_0: 18 bytes per 32 weights: d f16, 16 bytes of 4-bit quants.
//	      Byte j holds weight j (low nibble) and weight j+16 (high nibble);
//	      w = d*(q-8).
//	Q4_1  block_q4_1: 20 bytes per 32 weights: d f16, m f16, 16 bytes of
//	      4-bit quants laid out as in Q4_0; w = q*d + m.
//	Q5_0  block_q5_0: 22 bytes per 32 weights: d f16, qh 4 bytes (uint32 LE,
//	      bit j is the 5th bit of weight j), 16 bytes of low nibbles laid out as
//	      in Q4_0; w = d*(q-16).
//	Q5_1  block_q5_1: 24 bytes per 32 weights: d f16, m f16, qh 4 bytes and
//	      16 bytes of low nibbles as in Q5_0; w = q*d + m (q in 0..31).
//	Q8_0  block_q8_0: 34 bytes per 32 weights: d f16, 32 int8 quants; w = d*q.
//	Q8_1  block_q8_1: 36 bytes per 32 weights: d f16, s f16 (d times the sum
//	      of the quants), 32 int8 quants; w = d*q. Used only for the
//	      activations that Q4_1/Q5_1 dot products consume.
//	Q4_K  block_q4_K: 144 bytes per 256 weights: d f16, dmin f16, 12 bytes of
//	      6-bit scales/mins packed (8 sub-blocks of 32 weights, one 6-bit
//	      scale and one 6-bit min each), 128 bytes of 4-bit quants. Each 32-byte
//	      run of quants holds sub-block 2k (low nibbles) and 2k+1 (high
//	      nibbles); w = d*scale*q - dmin*min.
//	Q5_K  block_q5_K: 176 bytes per 256 weights: d f16, dmin f16, 12 bytes of
//	      6-bit scales/mins packed as in Q4_K, qh 32 bytes (the 5th bits: bit
//	      2k and 2k+1 of byte l for sub-blocks 2k and 2k+1), 128 bytes of low
//	      nibbles as in Q4_K; w = d*scale*q - dmin*min.
//	Q6_K  block_q6_K: 210 bytes per 256 weights: ql 128 bytes of low 4 bits,
//	      qh 64 bytes of high 2 bits, 16 int8 scales (16 sub-blocks of 16
//	      weights), d f16; w = d*scale*(q-32).
//	Q8_K  block_q8_K: 292 bytes per 256 weights: d f32, 256 int8 quants, 16
//	      int16 bsums (the sum of each run of 16 quants; the fast kernels
//	      take the Q4_K/Q5_K mins and the Q6_K -32 offset through them, so
//	      they must match the quants, as every encoder writes them). Used
//	      only for the activations that K-quant dot products consume;
//	      w = d*q.
//
// The 12 packed scale bytes of Q4_K/Q5_K hold scale s[j] and min m[j] for
// sub-blocks j=0..7: for j<4, s[j] = b[j]&63 and m[j] = b[j+4]&63; for j>=4,
// s[j] = b[j+4]&15 | (b[j-4]>>6)<<4 and m[j] = b[j+4]>>4 | (b[j]>>6)<<4.
//
// # Arithmetic
//
// Dequantization and the quantizers reproduce ggml's float32 arithmetic bit
// for bit: products are rounded to float32 on their own (never fused into an
// FMA) and evaluated in ggml's association order. (The dot products fuse
// where ggml does; see below.) The f16 and bf16
// conversions are ggml's (f16→f32 exact, f32→f16 round-to-nearest-even, f32→bf16
// round-to-nearest-even with NaNs forced quiet).
//
// # Dot products
//
// A weight row of type t is multiplied with an activation vector encoded in
// t.VecDotType(), as ggml's CPU backend does: Q8_K for the K-quants, Q8_0 for
// Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, F16 for F16, BF16 for BF16, F32 for F32. QuantizeActivation
// produces that encoding (bit for bit as ggml's x86 backend: its Q8_0 and
// Q8_1 activation encoders round half to even, unlike the file quantizers
// QuantizeQ8_0 and QuantizeQ8_1). DotFor returns the row kernel for a type; MatVec and MatMul
// run it over a row range [r0, r1), so workers can split the rows of one
// matrix. DotColsFor and DotColsForMatrix return the batched kernel (one
// row, several activation vectors: the prefill shape) in the order of
// DotFor and DotForMatrix, which gives every vector that row kernel's bits;
// MatMul runs it.
//
// Inside a block the products are summed as exact integers. The block sums
// are scaled and accumulated in float32 in the order of llama.cpp's CPU
// backend (ggml) on x86, spelled out by the reference loops in dot_ref.go,
// dot_ref_k.go and order.go, with FMAs where ggml fuses (emulated exactly in
// Go): Kernels.Dot follows ggml's plain kernels (the AVX2 branch of
// ggml_vec_dot_*, eight lanes and hsum_float_8, for Q4_0/Q5_0/Q8_0 and
// Q4_K/Q5_K/Q6_K; ggml_vec_dot_f16's lanes for F16, 64 of them on a CPU with
// AVX-512F, 32 otherwise), and Kernels.DotAMX the kernels of ggml's AMX
// buffer (Q4_K/Q5_K/Q6_K/Q8_0); DotForMatrix picks the one ggml uses for a
// matrix on this machine. On x86 these results equal llama.cpp's bit for
// bit (docs/ggml-order.md). F32 and BF16 use quant's own order (32 lanes,
// element i in lane i%32, reduced in a fixed tree), not ggml's. The order is
// a contract either way: the fast path reproduces it, so Fast and Reference
// give identical bits for every input (the conformance suite in quanttest
// checks it, guard bytes included), and the tests bound the error against a
// float64 dot product of the dequantized operands by 1e-5·Σ|w·a|.
//
// # Implementations
//
// Reference holds the portable Go loops. Fast is what the build runs: on
// amd64 with AVX2 (and F16C), Go assembly for every dot product and for the
// Q8_K encoder (dot_*_amd64.s, quant_q8k_amd64.s), chosen at start-up with
// golang.org/x/sys/cpu; elsewhere, or with -tags purego, the reference
// loops. The fast batched kernels of Q4_K, Q6_K and Q8_0 decode each weight
// block once for four activation vectors (in both orders, with the row
// kernels' bits); the other batched kernels run the row kernel per vector.
// On a CPU with AVX-512 F/BW/VL and VNNI as well, Fast's Q4_K and Q6_K
// kernels use 512-bit registers (dot_k_vnni_amd64.s, two 32-weight runs per
// register), its batched Q4_K and Q6_K kernels (both orders; the AMX
// order's with VPDPBUSD, dot_k_vnni_amx_amd64.s) and Q5_K, Q8_0 and Q4_0
// kernels (plain order; dot_q8_vnni_amd64.s for Q8_0 and Q4_0, with
// VPDPBUSD) take eight vectors per weight block (a tail of five to seven
// goes through them with the padding), Q5_K's, Q6_K's, Q8_0's and Q4_0's
// four in the plain order, and its panel
// kernels (Q4_K in the CPU_REPACK order, panel.go) sum two 4-byte groups of
// each of the eight rows per register with VPDPBUSD
// (dot_panel_vnni_amd64.s); only the exact integer sums are computed
// differently, so the bits are the AVX2 kernels'. Implementations lists what this CPU runs (there, the AVX2 path
// as well), and the conformance suite checks each against Reference.
package quant
