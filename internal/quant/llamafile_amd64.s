//go:build amd64 && !purego

#include "textflag.h"

// llamafile's tinyBLAS order for four activation columns at once (see
// llamafile.go): one accumulator of 8 lanes per column (Y0..Y3; for 16
// lanes a second one, Y4..Y7, holds lanes 8..15), lane l taking one FMA per
// element i ≡ l mod lanes in index order, then hsum. SI is the weight row;
// DI, R8, R9, R10 the four columns (astride bytes apart; 0: the same
// column four times). For F16 both sides are widened with VCVTPH2PS
// (exact), as tinyBLAS's load does.

// F16 step: the 8 elements at element offset off/2 of the row and of each
// column, into L0..L3.
#define TINY_F16(off, L0, L1, L2, L3) \
	VCVTPH2PS off(SI), Y8; \
	VCVTPH2PS off(DI), Y9; \
	VCVTPH2PS off(R8), Y10; \
	VCVTPH2PS off(R9), Y11; \
	VCVTPH2PS off(R10), Y12; \
	VFMADD231PS Y9, Y8, L0; \
	VFMADD231PS Y10, Y8, L1; \
	VFMADD231PS Y11, Y8, L2; \
	VFMADD231PS Y12, Y8, L3

// F32 step: the 8 elements at byte offset off.
#define TINY_F32(off, L0, L1, L2, L3) \
	VMOVUPS off(SI), Y8; \
	VMOVUPS off(DI), Y9; \
	VMOVUPS off(R8), Y10; \
	VMOVUPS off(R9), Y11; \
	VMOVUPS off(R10), Y12; \
	VFMADD231PS Y9, Y8, L0; \
	VFMADD231PS Y10, Y8, L1; \
	VFMADD231PS Y11, Y8, L2; \
	VFMADD231PS Y12, Y8, L3

// HSUM8 stores hsum8 of the lanes of Y (X its low half) to off(BX):
// r_k = l_k + l_{k+4}, then (r0 + r2) + (r1 + r3).
#define HSUM8(Y, X, off) \
	VEXTRACTF128 $1, Y, X13; \
	VADDPS X, X13, X13; \
	VMOVHLPS X13, X13, X14; \
	VADDPS X14, X13, X13; \
	VMOVSHDUP X13, X14; \
	VADDSS X14, X13, X13; \
	VMOVSS X13, off(BX)

// TINY_NEXT moves the row and the four columns on by b bytes.
#define TINY_NEXT(b) \
	ADDQ b, SI; \
	ADDQ b, DI; \
	ADDQ b, R8; \
	ADDQ b, R9; \
	ADDQ b, R10

#define TINY_ARGS \
	MOVQ w+0(FP), SI; \
	MOVQ a+8(FP), DI; \
	MOVQ astride+16(FP), AX; \
	MOVQ n+24(FP), CX; \
	MOVQ out+32(FP), BX; \
	LEAQ (DI)(AX*1), R8; \
	LEAQ (R8)(AX*1), R9; \
	LEAQ (R9)(AX*1), R10; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// FOLD16 adds lanes 8..15 (Y4..Y7) to lanes 0..7, as _mm512_reduce_add_ps
// first does.
#define FOLD16 \
	VADDPS Y4, Y0, Y0; \
	VADDPS Y5, Y1, Y1; \
	VADDPS Y6, Y2, Y2; \
	VADDPS Y7, Y3, Y3

#define TINY_STORE \
	HSUM8(Y0, X0, 0); \
	HSUM8(Y1, X1, 4); \
	HSUM8(Y2, X2, 8); \
	HSUM8(Y3, X3, 12); \
	VZEROUPPER

// func tinyF16x8(w, a *byte, astride, n int, out *[4]float32)
// n is a multiple of 8.
TEXT ·tinyF16x8(SB), NOSPLIT, $0-40
	TINY_ARGS
	TESTQ CX, CX
	JZ    h8done

h8loop:
	TINY_F16(0, Y0, Y1, Y2, Y3)
	TINY_NEXT($16)
	SUBQ $8, CX
	JNZ  h8loop

h8done:
	TINY_STORE
	RET

// func tinyF16x16(w, a *byte, astride, n int, out *[4]float32)
// n is a multiple of 16.
TEXT ·tinyF16x16(SB), NOSPLIT, $0-40
	TINY_ARGS
	TESTQ CX, CX
	JZ    h16done

h16loop:
	TINY_F16(0, Y0, Y1, Y2, Y3)
	TINY_F16(16, Y4, Y5, Y6, Y7)
	TINY_NEXT($32)
	SUBQ $16, CX
	JNZ  h16loop

h16done:
	FOLD16
	TINY_STORE
	RET

// func tinyF32x8(w, a *byte, astride, n int, out *[4]float32)
// n is a multiple of 8.
TEXT ·tinyF32x8(SB), NOSPLIT, $0-40
	TINY_ARGS
	TESTQ CX, CX
	JZ    s8done

s8loop:
	TINY_F32(0, Y0, Y1, Y2, Y3)
	TINY_NEXT($32)
	SUBQ $8, CX
	JNZ  s8loop

s8done:
	TINY_STORE
	RET

// func tinyF32x16(w, a *byte, astride, n int, out *[4]float32)
// n is a multiple of 16.
TEXT ·tinyF32x16(SB), NOSPLIT, $0-40
	TINY_ARGS
	TESTQ CX, CX
	JZ    s16done

s16loop:
	TINY_F32(0, Y0, Y1, Y2, Y3)
	TINY_F32(32, Y4, Y5, Y6, Y7)
	TINY_NEXT($64)
	SUBQ $16, CX
	JNZ  s16loop

s16done:
	FOLD16
	TINY_STORE
	RET
