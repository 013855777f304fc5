// Shared macros of the AVX2 kernels (dot_*_amd64.s, quant_q8k_amd64.s).
//
// Every kernel here reproduces its reference loop in dot_ref.go / quant.go
// bit for bit: integer block sums are exact (two's-complement sums do not
// depend on order), and the per-block float32 steps are the same scalar
// operations in the same order (VMULSS/VADDSS/VSUBSS round like Go's float32
// arithmetic; nothing is fused). f16 fields are widened with VCVTPH2PS,
// which is exact.

// HSUM_D sums the 8 int32 lanes of Y into the low dword of X (T scratch).
#define HSUM_D(Y, X, T) \
	VEXTRACTI128 $1, Y, T; \
	VPADDD T, X, X; \
	VPSHUFD $0x4E, X, T; \
	VPADDD T, X, X; \
	VPSHUFD $0xB1, X, T; \
	VPADDD T, X, X
