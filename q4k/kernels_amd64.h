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

// The four-vector kernels keep vector 0's block pointer in DI, the stride
// in R13 and vector 3's block pointer in DX, and four int32 lane sums in
// Y0..Y3.

// ACT_PTRS sets DX to vector 3's block.
#define ACT_PTRS \
	LEAQ (DI)(R13*2), DX; \
	ADDQ R13, DX

// REDUCE4 sums the eight int32 lanes of each of Y0..Y3 into lane c of X0.
#define REDUCE4 \
	VPHADDD Y1, Y0, Y0; \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y2, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0
