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

// The four-vector kernels (dot_k_amd64.s, dot_q8_amd64.s) keep vector 0's
// block pointer in DI, the stride in R13 and vector 3's block pointer in DX,
// and the four vectors' int32 lanes in Y0..Y3.

// ACT_PTRS sets DX to vector 3's block.
#define ACT_PTRS \
	LEAQ (DI)(R13*2), DX; \
	ADDQ R13, DX

// REDUCE4 sums the eight int32 lanes of each of Y0..Y3 into lane c of X0
// (exact: two's-complement sums do not depend on order; X1, Y2 scratch).
#define REDUCE4 \
	VPHADDD Y1, Y0, Y0; \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y2, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0

// DA4 gathers the four vectors' f32 block scales (Q8_K d) into X8.
#define DA4 \
	VMOVSS (DI), X8; \
	VINSERTPS $0x10, (DI)(R13*1), X8, X8; \
	VINSERTPS $0x20, (DI)(R13*2), X8, X8; \
	VINSERTPS $0x30, (DX), X8, X8

// Row kernels (one activation vector: the decode shape) stream their weight
// row from memory once and are bound by how fast it arrives, not by
// arithmetic. The hardware prefetchers stop at 4 KiB page boundaries, so
// each row kernel also asks for the weight bytes PF_AHEAD ahead of the
// block it is on (past the row's end that is the next row, which the same
// thread usually takes next). A prefetch changes no result and cannot fault.
// On a 2-core Sapphire Rapids VM this took the 1.1B Q4_K_M fixture's
// one-thread decode from about 9 to about 13 tokens/s; 2, 3, 4 and 8 KiB
// ahead were within noise of each other, 512 bytes gained half as much.
#define PF_AHEAD 4096

// PREFETCH_Q4K covers one 144-byte Q4_K block (or 176-byte Q5_K block)
// PF_AHEAD ahead of R.
#define PREFETCH_Q4K(R) \
	PREFETCHT0 PF_AHEAD(R); \
	PREFETCHT0 PF_AHEAD+64(R); \
	PREFETCHT0 PF_AHEAD+128(R)

// PREFETCH_Q6K covers one 210-byte Q6_K block PF_AHEAD ahead of R.
#define PREFETCH_Q6K(R) \
	PREFETCHT0 PF_AHEAD(R); \
	PREFETCHT0 PF_AHEAD+64(R); \
	PREFETCHT0 PF_AHEAD+128(R); \
	PREFETCHT0 PF_AHEAD+192(R)
