//go:build amd64 && !purego

#include "textflag.h"

// ggml_v_expf's AVX-512 form in 512-bit registers (AVX-512F) for 16-lane
// builds: attention's probabilities (what attendHead does with a row of
// scores, as ggml's soft_max_ext then the f16 conversion of the
// probabilities do it) and SwiGLU (ggml_vec_swiglu_f32's vectors).

DATA pLog2e<>+0(SB)/4, $0x3fb8aa3b // 0x1.715476p+0
GLOBL pLog2e<>(SB), RODATA|NOPTR, $4
DATA pR<>+0(SB)/4, $0x4b400000 // 0x1.8p23
GLOBL pR<>(SB), RODATA|NOPTR, $4
DATA pLn2hi<>+0(SB)/4, $0x3f317200 // 0x1.62e4p-1
GLOBL pLn2hi<>(SB), RODATA|NOPTR, $4
DATA pLn2lo<>+0(SB)/4, $0x35bfbe8e // 0x1.7f7d1cp-20
GLOBL pLn2lo<>(SB), RODATA|NOPTR, $4
DATA pC1<>+0(SB)/4, $0x3c072010 // 0x1.0e4020p-7
GLOBL pC1<>(SB), RODATA|NOPTR, $4
DATA pC2<>+0(SB)/4, $0x3d2b9f17 // 0x1.573e2ep-5
GLOBL pC2<>(SB), RODATA|NOPTR, $4
DATA pC3<>+0(SB)/4, $0x3e2aaf33 // 0x1.555e66p-3
GLOBL pC3<>(SB), RODATA|NOPTR, $4
DATA pC4<>+0(SB)/4, $0x3efffedb // 0x1.fffdb6p-2
GLOBL pC4<>(SB), RODATA|NOPTR, $4
DATA pC5<>+0(SB)/4, $0x3f7ffff6 // 0x1.ffffecp-1
GLOBL pC5<>(SB), RODATA|NOPTR, $4
DATA pOne<>+0(SB)/4, $0x3f800000
GLOBL pOne<>(SB), RODATA|NOPTR, $4
DATA p192<>+0(SB)/4, $0x43400000
GLOBL p192<>(SB), RODATA|NOPTR, $4
DATA pAbs<>+0(SB)/4, $0x7fffffff
GLOBL pAbs<>(SB), RODATA|NOPTR, $4
DATA pInf<>+0(SB)/4, $0x7f800000
GLOBL pInf<>(SB), RODATA|NOPTR, $4
DATA pNegInf<>+0(SB)/4, $0xff800000
GLOBL pNegInf<>(SB), RODATA|NOPTR, $4
DATA pOneD<>+0(SB)/8, $0x3ff0000000000000
GLOBL pOneD<>(SB), RODATA|NOPTR, $8

// EXPF16 sets Z1 to ggml_v_expf(Z1), the AVX-512 one, operation for
// operation (fused multiply-adds in f32, VSCALEFPS), using Z2-Z6 and K1,
// K2; the constants are in Z16-Z29 (see softmaxF16x16). It goes on at
// label skip, which the caller places right after it, when no lane's
// |n| exceeds 192.
#define EXPF16(skip) \
	VMOVAPS Z17, Z2; \
	VFMADD231PS Z16, Z1, Z2; \
	VSUBPS Z17, Z2, Z2; \
	VFNMADD231PS Z18, Z2, Z1; \
	VFNMADD231PS Z19, Z2, Z1; \
	VANDPS Z27, Z2, Z3; \
	VCMPPS $0x1E, Z26, Z3, K1; \
	VMULPS Z1, Z1, Z3; \
	VMOVAPS Z21, Z4; \
	VFMADD231PS Z20, Z1, Z4; \
	VMOVAPS Z23, Z5; \
	VFMADD231PS Z22, Z1, Z5; \
	VFMADD231PS Z3, Z4, Z5; \
	VMOVAPS Z25, Z6; \
	VFMADD231PS Z24, Z1, Z6; \
	VFMADD231PS Z3, Z5, Z6; \
	VSCALEFPS Z2, Z6, Z1; \
	KORTESTW K1, K1; \
	JZ skip; \
	VCMPPS $0x12, Z29, Z2, K2; \
	VMOVAPS Z28, Z3; \
	VMOVAPS Z29, K2, Z3; \
	VMOVAPS Z3, K1, Z1

// REDUCE16 adds Z1's lanes as _mm512_reduce_add_ps does (halves, quarters,
// then (b0+b2)+(b1+b3)) into X3, widens it and adds it to the float64 sum
// in X9.
#define REDUCE16 \
	VEXTRACTF64X4 $1, Z1, Y3; \
	VADDPS Y3, Y1, Y3; \
	VEXTRACTF128 $1, Y3, X4; \
	VADDPS X4, X3, X3; \
	VPERMILPS $0x4E, X3, X4; \
	VADDPS X4, X3, X3; \
	VMOVSHDUP X3, X4; \
	VADDSS X4, X3, X3; \
	VCVTSS2SD X3, X3, X3; \
	VADDSD X3, X9, X9

// EXP_CONSTS loads EXPF16's constants into Z16-Z29.
#define EXP_CONSTS \
	VBROADCASTSS pLog2e<>(SB), Z16; \
	VBROADCASTSS pR<>(SB), Z17; \
	VBROADCASTSS pLn2hi<>(SB), Z18; \
	VBROADCASTSS pLn2lo<>(SB), Z19; \
	VBROADCASTSS pC1<>(SB), Z20; \
	VBROADCASTSS pC2<>(SB), Z21; \
	VBROADCASTSS pC3<>(SB), Z22; \
	VBROADCASTSS pC4<>(SB), Z23; \
	VBROADCASTSS pC5<>(SB), Z24; \
	VBROADCASTSS pOne<>(SB), Z25; \
	VBROADCASTSS p192<>(SB), Z26; \
	VBROADCASTSS pAbs<>(SB), Z27; \
	VBROADCASTSS pInf<>(SB), Z28; \
	VPXORD Z29, Z29, Z29

// func swigluZ(h, gate, up *float32, vecs int)
//
// h[i] = silu(gate[i]) * up[i] for i < 16*vecs, as ggml_vec_swiglu_f32's
// AVX-512 vectors compute it: ggml_v_silu(g) = g / (1 + ggml_v_expf(0 -
// g)), times up. h may alias gate or up.
TEXT ·swigluZ(SB), NOSPLIT, $0-32
	MOVQ h+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), DX
	MOVQ vecs+24(FP), CX
	EXP_CONSTS

swzloop:
	TESTQ CX, CX
	JZ    swzdone
	VMOVUPS (SI), Z7
	VSUBPS Z7, Z29, Z1
	EXPF16(swze)

swze:
	VADDPS Z25, Z1, Z1
	VDIVPS Z1, Z7, Z1
	VMULPS (DX), Z1, Z1
	VMOVUPS Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	DECQ CX
	JMP  swzloop

swzdone:
	VZEROUPPER
	RET

// func softmaxF16x16(w *float32, n int, scale float32)
//
// For the n scores at w: w = roundF16(softmax(w * scale)), where softmax
// is simd.softmax's 16-lane arithmetic: max over the scaled scores; each
// vector of 16 (the last zero-padded past n) takes ggml_v_expf(w - max)
// and adds its horizontal sum, widened, to a float64 total in order; every
// value is then multiplied by f32(1/total) and rounded to f16 (to nearest
// even, VCVTPS2PH) and back. n > 0.
TEXT ·softmaxF16x16(SB), NOSPLIT, $0-20
	MOVQ w+0(FP), DI
	MOVQ n+8(FP), BX
	VBROADCASTSS scale+16(FP), Z10
	EXP_CONSTS
	VBROADCASTSS pNegInf<>(SB), Z11

	// K7: the lanes of the partial last vector; CX whole vectors.
	MOVQ BX, CX
	ANDQ $15, CX
	MOVQ CX, AX
	MOVL $1, DX
	SHLL CX, DX
	DECL DX
	KMOVW DX, K7
	MOVQ BX, CX
	SHRQ $4, CX

	// Scale and the maximum.
	MOVQ DI, SI
	MOVQ CX, R8
	VMOVAPS Z11, Z12 // max

sm1loop:
	TESTQ R8, R8
	JZ    sm1tail
	VMULPS (SI), Z10, Z1
	VMOVUPS Z1, (SI)
	VMAXPS Z1, Z12, Z12
	ADDQ $64, SI
	DECQ R8
	JMP  sm1loop

sm1tail:
	TESTQ AX, AX
	JZ    sm1max
	VMOVAPS Z11, Z1
	VMOVUPS (SI), K7, Z1
	VMULPS Z1, Z10, Z1
	VMOVUPS Z1, K7, (SI)
	VMAXPS Z1, Z12, Z12

sm1max:
	VEXTRACTF64X4 $1, Z12, Y1
	VMAXPS Y1, Y12, Y12
	VEXTRACTF128 $1, Y12, X1
	VMAXPS X1, X12, X12
	VPERMILPS $0x4E, X12, X1
	VMAXPS X1, X12, X12
	VMOVSHDUP X12, X1
	VMAXPS X1, X12, X12
	VBROADCASTSS X12, Z12

	// The exponentials and their float64 sum.
	VXORPD X9, X9, X9
	MOVQ DI, SI
	MOVQ CX, R8

sm2loop:
	TESTQ R8, R8
	JZ    sm2tail
	VMOVUPS (SI), Z1
	VSUBPS Z12, Z1, Z1
	EXPF16(sm2e)

sm2e:
	VMOVUPS Z1, (SI)
	REDUCE16
	ADDQ $64, SI
	DECQ R8
	JMP  sm2loop

sm2tail:
	TESTQ AX, AX
	JZ    sm2inv
	VMOVUPS.Z (SI), K7, Z1
	VSUBPS Z12, Z1, Z1
	EXPF16(sm2te)

sm2te:
	VMOVAPS.Z Z1, K7, Z1
	VMOVUPS Z1, K7, (SI)
	REDUCE16

sm2inv:
	// inv = f32(1 / sum)
	VMOVSD pOneD<>(SB), X1
	VDIVSD X9, X1, X1
	VCVTSD2SS X1, X1, X1
	VBROADCASTSS X1, Z13
	MOVQ DI, SI
	MOVQ CX, R8

sm3loop:
	TESTQ R8, R8
	JZ    sm3tail
	VMULPS (SI), Z13, Z1
	VCVTPS2PH $0, Z1, Y1
	VCVTPH2PS Y1, Z1
	VMOVUPS Z1, (SI)
	ADDQ $64, SI
	DECQ R8
	JMP  sm3loop

sm3tail:
	TESTQ AX, AX
	JZ    smdone
	VMOVUPS.Z (SI), K7, Z1
	VMULPS Z1, Z13, Z1
	VCVTPS2PH $0, Z1, Y1
	VCVTPH2PS Y1, Z1
	VMOVUPS Z1, K7, (SI)

smdone:
	VZEROUPPER
	RET

// pEvenSign<>: the sign bit in the even lanes of 16, zero in the odd.
DATA pEvenSign<>+0(SB)/8, $0x0000000080000000
GLOBL pEvenSign<>(SB), RODATA|NOPTR, $8

// func ropeNormZ(x, cs *float32, vecs int)
//
// rope.apply's RopeNorm rotation of 16*vecs values of one head at x (pairs
// (x0, x1) adjacent) by the cos/sin pairs at cs (c, s adjacent), as ggml's
// x86 builds compile it: even lane x0' = fma(x0, c, -(x1*s)), odd lane
// x1' = fma(x0, s, x1*c), the x1 product rounded, the x0 product fused.
TEXT ·ropeNormZ(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ cs+8(FP), SI
	MOVQ vecs+16(FP), CX
	VPBROADCASTQ pEvenSign<>(SB), Z7

rnloop:
	TESTQ CX, CX
	JZ    rndone
	VMOVUPS (DI), Z0
	VMOVUPS (SI), Z1           // c, s
	VMOVSLDUP Z0, Z2           // x0, x0
	VMOVSHDUP Z0, Z3           // x1, x1
	VPERMILPS $0xB1, Z1, Z4    // s, c
	VMULPS Z4, Z3, Z3          // x1*s, x1*c
	VPXORD Z7, Z3, Z3          // -(x1*s), x1*c
	VFMADD231PS Z1, Z2, Z3     // x0*c + ·, x0*s + ·
	VMOVUPS Z3, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	DECQ CX
	JMP  rnloop

rndone:
	VZEROUPPER
	RET
