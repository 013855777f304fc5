//go:build amd64 && !purego

#include "textflag.h"

// simd.dotF16RowsBatch's arithmetic (llamafile's tinyBLAS order, 16
// lanes) for sixteen rows at once in 512-bit registers (AVX-512F): row k's
// accumulator Zk adds x*y (exact: both are f16 values) lane by lane, one
// vector of 16 elements at a time in order, the partial last vector's
// lanes past n zeros on both sides (masked loads); then the sixteen
// accumulators are reduced together, each as reduceTiny does (lanes l and
// l+8, then l and l+4, then (r0+r2) + (r1+r3)), the same adds of the same
// pairs done sixteen rows to a vector by shuffles (a transposed tree).

// tinyPerm<> holds the VPERMPS indices that put the transposed tree's
// results in row order: row i is at element 4*(i%4) + i/4.
DATA tinyPerm<>+0(SB)/4, $0
DATA tinyPerm<>+4(SB)/4, $4
DATA tinyPerm<>+8(SB)/4, $8
DATA tinyPerm<>+12(SB)/4, $12
DATA tinyPerm<>+16(SB)/4, $1
DATA tinyPerm<>+20(SB)/4, $5
DATA tinyPerm<>+24(SB)/4, $9
DATA tinyPerm<>+28(SB)/4, $13
DATA tinyPerm<>+32(SB)/4, $2
DATA tinyPerm<>+36(SB)/4, $6
DATA tinyPerm<>+40(SB)/4, $10
DATA tinyPerm<>+44(SB)/4, $14
DATA tinyPerm<>+48(SB)/4, $3
DATA tinyPerm<>+52(SB)/4, $7
DATA tinyPerm<>+56(SB)/4, $11
DATA tinyPerm<>+60(SB)/4, $15
GLOBL tinyPerm<>(SB), RODATA|NOPTR, $64

// T16_ACC adds one vector of the sixteen rows (f16 at off from the row
// pointers: R8 rows 0-3, R9 rows 4-7, R10 rows 8-11, R11 rows 12-15, each
// base plus 0, 1, 2 (AX) and 3 (DX) strides) times y's vector in Z16 into
// Z0..Z15.
#define T16_ACC(off) \
	VCVTPH2PS off(R8), Z17; \
	VFMADD231PS Z16, Z17, Z0; \
	VCVTPH2PS off(R8)(AX*1), Z18; \
	VFMADD231PS Z16, Z18, Z1; \
	VCVTPH2PS off(R8)(AX*2), Z19; \
	VFMADD231PS Z16, Z19, Z2; \
	VCVTPH2PS off(R8)(DX*1), Z20; \
	VFMADD231PS Z16, Z20, Z3; \
	VCVTPH2PS off(R9), Z17; \
	VFMADD231PS Z16, Z17, Z4; \
	VCVTPH2PS off(R9)(AX*1), Z18; \
	VFMADD231PS Z16, Z18, Z5; \
	VCVTPH2PS off(R9)(AX*2), Z19; \
	VFMADD231PS Z16, Z19, Z6; \
	VCVTPH2PS off(R9)(DX*1), Z20; \
	VFMADD231PS Z16, Z20, Z7; \
	VCVTPH2PS off(R10), Z17; \
	VFMADD231PS Z16, Z17, Z8; \
	VCVTPH2PS off(R10)(AX*1), Z18; \
	VFMADD231PS Z16, Z18, Z9; \
	VCVTPH2PS off(R10)(AX*2), Z19; \
	VFMADD231PS Z16, Z19, Z10; \
	VCVTPH2PS off(R10)(DX*1), Z20; \
	VFMADD231PS Z16, Z20, Z11; \
	VCVTPH2PS off(R11), Z17; \
	VFMADD231PS Z16, Z17, Z12; \
	VCVTPH2PS off(R11)(AX*1), Z18; \
	VFMADD231PS Z16, Z18, Z13; \
	VCVTPH2PS off(R11)(AX*2), Z19; \
	VFMADD231PS Z16, Z19, Z14; \
	VCVTPH2PS off(R11)(DX*1), Z20; \
	VFMADD231PS Z16, Z20, Z15

// T16_PART is T16_ACC for the partial vector: lanes outside K1 are zeros.
#define T16_PART \
	VCVTPH2PS.Z (R8), K1, Z17; \
	VFMADD231PS Z16, Z17, Z0; \
	VCVTPH2PS.Z (R8)(AX*1), K1, Z18; \
	VFMADD231PS Z16, Z18, Z1; \
	VCVTPH2PS.Z (R8)(AX*2), K1, Z19; \
	VFMADD231PS Z16, Z19, Z2; \
	VCVTPH2PS.Z (R8)(DX*1), K1, Z20; \
	VFMADD231PS Z16, Z20, Z3; \
	VCVTPH2PS.Z (R9), K1, Z17; \
	VFMADD231PS Z16, Z17, Z4; \
	VCVTPH2PS.Z (R9)(AX*1), K1, Z18; \
	VFMADD231PS Z16, Z18, Z5; \
	VCVTPH2PS.Z (R9)(AX*2), K1, Z19; \
	VFMADD231PS Z16, Z19, Z6; \
	VCVTPH2PS.Z (R9)(DX*1), K1, Z20; \
	VFMADD231PS Z16, Z20, Z7; \
	VCVTPH2PS.Z (R10), K1, Z17; \
	VFMADD231PS Z16, Z17, Z8; \
	VCVTPH2PS.Z (R10)(AX*1), K1, Z18; \
	VFMADD231PS Z16, Z18, Z9; \
	VCVTPH2PS.Z (R10)(AX*2), K1, Z19; \
	VFMADD231PS Z16, Z19, Z10; \
	VCVTPH2PS.Z (R10)(DX*1), K1, Z20; \
	VFMADD231PS Z16, Z20, Z11; \
	VCVTPH2PS.Z (R11), K1, Z17; \
	VFMADD231PS Z16, Z17, Z12; \
	VCVTPH2PS.Z (R11)(AX*1), K1, Z18; \
	VFMADD231PS Z16, Z18, Z13; \
	VCVTPH2PS.Z (R11)(AX*2), K1, Z19; \
	VFMADD231PS Z16, Z19, Z14; \
	VCVTPH2PS.Z (R11)(DX*1), K1, Z20; \
	VFMADD231PS Z16, Z20, Z15

// FOLD16 is the tree's first level for rows A and B: D = (A's lanes l +
// l+8 for l < 8, then B's), by 256-bit halves.
#define FOLD16(A, B, D) \
	VSHUFF64X2 $0x44, B, A, Z17; \
	VSHUFF64X2 $0xEE, B, A, Z18; \
	VADDPS Z18, Z17, D

// FOLD8 is the second level for two folded pairs P (rows a, b) and Q
// (rows c, d): D = (a's lanes m + m+4 for m < 4, then b's, c's, d's), by
// 128-bit lanes.
#define FOLD8(P, Q, D) \
	VSHUFF32X4 $0x88, Q, P, Z17; \
	VSHUFF32X4 $0xDD, Q, P, Z18; \
	VADDPS Z18, Z17, D

// func tinyRows16(x *byte, xstride int, y *float32, n, groups int, out *float32)
//
// For groups groups of sixteen rows (group g's row k at x + (16g+k)*
// xstride, n f16 each): out[16g+k] = the tinyBLAS 16-lane product of the
// row with y (n f32 that are f16 values): n/16 whole vectors, then the
// partial one (n%16 lanes) zero-padded, then reduceTiny's tree.
TEXT ·tinyRows16(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), R12
	MOVQ xstride+8(FP), AX
	MOVQ n+24(FP), BX
	MOVQ groups+32(FP), R13
	MOVQ out+40(FP), R14
	LEAQ (AX)(AX*2), DX // 3 strides
	MOVQ AX, R15
	SHLQ $4, R15 // 16 strides: the next group

	// K1: the partial vector's lanes.
	MOVQ BX, CX
	ANDQ $15, CX
	MOVL $1, SI
	SHLL CX, SI
	DECL SI
	KMOVW SI, K1
	SHRQ $4, BX // whole vectors

t16group:
	TESTQ R13, R13
	JZ    t16done
	MOVQ  R12, R8
	LEAQ  (R8)(AX*4), R9
	LEAQ  (R9)(AX*4), R10
	LEAQ  (R10)(AX*4), R11
	MOVQ  y+16(FP), DI
	MOVQ  BX, SI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

t16vec:
	TESTQ SI, SI
	JZ    t16part
	VMOVUPS (DI), Z16
	T16_ACC(0)
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $64, DI
	DECQ SI
	JMP  t16vec

t16part:
	TESTQ CX, CX
	JZ    t16reduce
	VMOVUPS.Z (DI), K1, Z16
	T16_PART

t16reduce:
	FOLD16(Z0, Z1, Z0)
	FOLD16(Z2, Z3, Z2)
	FOLD16(Z4, Z5, Z4)
	FOLD16(Z6, Z7, Z6)
	FOLD16(Z8, Z9, Z8)
	FOLD16(Z10, Z11, Z10)
	FOLD16(Z12, Z13, Z12)
	FOLD16(Z14, Z15, Z14)
	FOLD8(Z0, Z2, Z0)   // rows 0-3
	FOLD8(Z4, Z6, Z4)   // rows 4-7
	FOLD8(Z8, Z10, Z8)  // rows 8-11
	FOLD8(Z12, Z14, Z12) // rows 12-15

	// Third level, per 128-bit lane: (r0+r2, r1+r3) of two rows' lanes.
	VSHUFPS $0x44, Z4, Z0, Z17
	VSHUFPS $0xEE, Z4, Z0, Z18
	VADDPS  Z18, Z17, Z0
	VSHUFPS $0x44, Z12, Z8, Z17
	VSHUFPS $0xEE, Z12, Z8, Z18
	VADDPS  Z18, Z17, Z8

	// Fourth: (r0+r2) + (r1+r3); element 4k+m is then row 4m+k.
	VSHUFPS $0x88, Z8, Z0, Z17
	VSHUFPS $0xDD, Z8, Z0, Z18
	VADDPS  Z18, Z17, Z0
	VMOVUPS tinyPerm<>(SB), Z19
	VPERMPS Z0, Z19, Z0
	VMOVUPS Z0, (R14)

	ADDQ $64, R14
	ADDQ R15, R12
	DECQ R13
	JMP  t16group

t16done:
	VZEROUPPER
	RET
