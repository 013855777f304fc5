// Shared macros of the AVX2 kernels (dot_*_amd64.s, quant_q8k_amd64.s).
//
// Every kernel here reproduces its reference loop (dot_ref.go, dot_ref_k.go,
// quant.go) bit for bit: integer block sums are exact (two's-complement sums
// do not depend on order, only on which products share an int32 lane, which
// the kernels keep as ggml's), and the float32 steps are the same operations
// in the same order — VMULSS/VADDSS/VSUBSS where the reference rounds each
// step, VFMADD231*/VFNMADD231* exactly where it calls fma32. f16 fields are
// widened with VCVTPH2PS, which is exact.

// HSUM_D sums the 8 int32 lanes of Y into the low dword of X (T scratch).
#define HSUM_D(Y, X, T) \
	VEXTRACTI128 $1, Y, T; \
	VPADDD T, X, X; \
	VPSHUFD $0x4E, X, T; \
	VPADDD T, X, X; \
	VPSHUFD $0xB1, X, T; \
	VPADDD T, X, X

// HSUM8 reduces the lanes of Y0 into X0: lanes k and k+4, then
// (l0+l2) + (l1+l3) (X1 scratch).
#define HSUM8 \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VMOVHLPS X0, X0, X1; \
	VADDPS X1, X0, X0; \
	VMOVSHDUP X0, X1; \
	VADDSS X1, X0, X0
