//go:build amd64 && !purego

#include "textflag.h"

// The vector part of simd.dotF16 and its reduction. Each f16 of x is
// widened with VCVTPH2PS (exact), multiplied by the f32 of y (exact: both
// are f16 values) and added into its lane's accumulator, one element per
// lane at a time, in order — the Go loop's lane arithmetic, eight lanes per
// instruction. The reductions add the same pairs in the same tree as
// simd.reduceVectors. Accumulator v (a 16-lane vector is a pair of Y
// registers) takes vectors v, v+4, v+8, ….

// F16_ACC adds x[8k..8k+7]*y[8k..8k+7] into ACC.
#define F16_ACC(k, ACC) \
	VCVTPH2PS (16*k)(SI), Y8; \
	VMULPS (32*k)(DI), Y8, Y8; \
	VADDPS Y8, ACC, ACC

// PARTIAL adds the zero-padded last vector (R8 f16, R9 f32; none when R8 is
// 0) into LO/HI and goes to the reduction. The padding adds +0 products,
// which leave every accumulator as it was (an accumulator that starts at +0
// is never -0).
#define PARTIAL16(LO, HI, done) \
	TESTQ R8, R8; \
	JZ    done; \
	MOVQ  R8, SI; \
	MOVQ  R9, DI; \
	F16_ACC(0, LO); \
	F16_ACC(1, HI); \
	JMP   done

// func dotF16Sum16(x *byte, y *float32, vecs int, px *byte, py *float32) float32
//
// simd.dotF16's vector part and reduction for 16 lanes in registers: vecs
// whole vectors (vector v into accumulator v%4), then the partial vector
// px/py (16 elements, zero-padded) when px is not nil, then reduceAcc16's
// tree.
TEXT ·dotF16Sum16(SB), NOSPLIT, $0-44
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ vecs+16(FP), CX
	MOVQ px+24(FP), R8
	MOVQ py+32(FP), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

s16loop:
	CMPQ CX, $4
	JLT  s16tail
	F16_ACC(0, Y0)
	F16_ACC(1, Y1)
	F16_ACC(2, Y2)
	F16_ACC(3, Y3)
	F16_ACC(4, Y4)
	F16_ACC(5, Y5)
	F16_ACC(6, Y6)
	F16_ACC(7, Y7)
	ADDQ $128, SI
	ADDQ $256, DI
	SUBQ $4, CX
	JMP  s16loop

s16tail:
	TESTQ CX, CX
	JNZ   s16t1
	PARTIAL16(Y0, Y1, s16reduce)

s16t1:
	F16_ACC(0, Y0)
	F16_ACC(1, Y1)
	CMPQ CX, $1
	JNE  s16t2
	PARTIAL16(Y2, Y3, s16reduce)

s16t2:
	F16_ACC(2, Y2)
	F16_ACC(3, Y3)
	CMPQ CX, $2
	JNE  s16t3
	PARTIAL16(Y4, Y5, s16reduce)

s16t3:
	F16_ACC(4, Y4)
	F16_ACC(5, Y5)
	PARTIAL16(Y6, Y7, s16reduce)

s16reduce:
	VADDPS Y4, Y0, Y0 // acc0+acc2, low lanes
	VADDPS Y5, Y1, Y1 // high lanes
	VADDPS Y6, Y2, Y2 // acc1+acc3
	VADDPS Y7, Y3, Y3
	VADDPS Y2, Y0, Y0 // v[0:8]
	VADDPS Y3, Y1, Y1 // v[8:16]
	VADDPS Y1, Y0, Y0 // a
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0 // b
	VPERMILPS $0x4E, X0, X1
	VADDPS X1, X0, X0 // b0+b2, b1+b3
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+40(FP)
	RET

// PARTIAL8 is PARTIAL16 for one 8-lane accumulator.
#define PARTIAL8(ACC, done) \
	TESTQ R8, R8; \
	JZ    done; \
	MOVQ  R8, SI; \
	MOVQ  R9, DI; \
	F16_ACC(0, ACC); \
	JMP   done

// func dotF16Rows8(x *byte, xstride int, y *float32, vecs int, px *byte, py *float32, rows int, out *float32)
//
// dotF16Sum16 for 8 lanes (partial vector of 8 elements, reduceAcc8's
// tree), over rows rows of x, xstride bytes apart, against one y: out[r]
// is row r's sum, its partial vector at px+16*r (px nil: none). One call
// for all of attention's products of one query with every key, or of the
// probabilities with every value dimension; dotF16Sum's 8-lane case is
// rows = 1.
TEXT ·dotF16Rows8(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), R10
	MOVQ xstride+8(FP), R11
	MOVQ y+16(FP), R12
	MOVQ vecs+24(FP), R13
	MOVQ px+32(FP), R14
	MOVQ py+40(FP), R9
	MOVQ rows+48(FP), BX
	MOVQ out+56(FP), DX

r8row:
	TESTQ BX, BX
	JZ    r8done
	MOVQ  R10, SI
	MOVQ  R12, DI
	MOVQ  R13, CX
	MOVQ  R14, R8
	// The rows of one call lie xstride apart (a key per position, a
	// value dimension per row), so each row's first lines miss the
	// caches: ask for the first two lines of the row four ahead.
	PREFETCHT0 (R10)(R11*8)
	PREFETCHT0 64(R10)(R11*8)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

r8loop:
	CMPQ CX, $4
	JLT  r8tail
	F16_ACC(0, Y0)
	F16_ACC(1, Y1)
	F16_ACC(2, Y2)
	F16_ACC(3, Y3)
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $4, CX
	JMP  r8loop

r8tail:
	TESTQ CX, CX
	JNZ   r8t1
	PARTIAL8(Y0, r8reduce)

r8t1:
	F16_ACC(0, Y0)
	CMPQ CX, $1
	JNE  r8t2
	PARTIAL8(Y1, r8reduce)

r8t2:
	F16_ACC(1, Y1)
	CMPQ CX, $2
	JNE  r8t3
	PARTIAL8(Y2, r8reduce)

r8t3:
	F16_ACC(2, Y2)
	PARTIAL8(Y3, r8reduce)

r8reduce:
	VADDPS Y2, Y0, Y0 // acc0+acc2
	VADDPS Y3, Y1, Y1 // acc1+acc3
	VADDPS Y1, Y0, Y0 // v
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0 // t
	VMOVSHDUP X0, X1
	VADDPS X1, X0, X0 // t0+t1 in lane 0, t2+t3 in lane 2
	VPERMILPS $0x4E, X0, X1
	VADDSS X1, X0, X0
	MOVSS X0, (DX)
	ADDQ  $4, DX
	ADDQ  R11, R10
	TESTQ R14, R14
	JZ    r8next
	ADDQ  $16, R14

r8next:
	DECQ BX
	JMP  r8row

r8done:
	VZEROUPPER
	RET

// simd.dotF16RowsBatch's arithmetic (llamafile's tinyBLAS order) for four
// rows at once: row r at x + r*xstride (xstride 0: one row four times),
// its zero-padded partial vector at px + r*pxstride when px is not nil.
// Each row has one accumulator of 8 lanes (Y0..Y3) — for 16 lanes a
// second (Y4..Y7) takes the odd vectors of 8, as the upper half of a
// 16-lane vector — adding x*y (exact) per element; then the 16-lane
// accumulators are folded (lanes l and l+8) and each is reduced as
// hsum(__m256): halves, then (r0+r2) + (r1+r3).

// TB_ROWS points R11, R12, R13 at rows 1-3: R10 plus 1, 2, 3 strides AX.
#define TB_ROWS \
	LEAQ (R10)(AX*1), R11; \
	LEAQ (R11)(AX*1), R12; \
	LEAQ (R12)(AX*1), R13

// TB_ACC adds the 8 elements at byte offset off of the rows (f16, R10,
// R11, R12, R13) and of y (f32, DI at offset 2*off) into A0..A3.
#define TB_ACC(off, A0, A1, A2, A3) \
	VMOVUPS (2*off)(DI), Y8; \
	VCVTPH2PS off(R10), Y9; \
	VCVTPH2PS off(R11), Y10; \
	VCVTPH2PS off(R12), Y11; \
	VCVTPH2PS off(R13), Y12; \
	VFMADD231PS Y8, Y9, A0; \
	VFMADD231PS Y8, Y10, A1; \
	VFMADD231PS Y8, Y11, A2; \
	VFMADD231PS Y8, Y12, A3

// TB_HSUM stores hsum8 of Y (X its low half) to off(BX).
#define TB_HSUM(Y, X, off) \
	VEXTRACTF128 $1, Y, X13; \
	VADDPS X, X13, X13; \
	VMOVHLPS X13, X13, X14; \
	VADDPS X14, X13, X13; \
	VMOVSHDUP X13, X14; \
	VADDSS X14, X13, X13; \
	VMOVSS X13, off(BX)

// func tinyRows4(x *byte, xstride int, y *float32, vecs int, px *byte, pxstride int, py *float32, wide int, out *[4]float32)
//
// vecs whole vectors of 8, then the partial one (px not nil); wide is 1
// for 16 lanes, 0 for 8.
TEXT ·tinyRows4(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), R10
	MOVQ xstride+8(FP), AX
	MOVQ y+16(FP), DI
	MOVQ vecs+24(FP), CX
	MOVQ wide+56(FP), DX
	MOVQ out+64(FP), BX
	TB_ROWS
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ DX, DX
	JNZ   tbwide

tb8loop:
	TESTQ CX, CX
	JZ    tb8part
	TB_ACC(0, Y0, Y1, Y2, Y3)
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $16, R12
	ADDQ $16, R13
	ADDQ $32, DI
	DECQ CX
	JMP  tb8loop

tb8part:
	MOVQ px+32(FP), R10
	TESTQ R10, R10
	JZ    tbdone
	MOVQ pxstride+40(FP), AX
	MOVQ py+48(FP), DI
	TB_ROWS
	TB_ACC(0, Y0, Y1, Y2, Y3)
	JMP  tbdone

tbwide:
	CMPQ CX, $2
	JLT  tbwtail
	TB_ACC(0, Y0, Y1, Y2, Y3)
	TB_ACC(16, Y4, Y5, Y6, Y7)
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $64, DI
	SUBQ $2, CX
	JMP  tbwide

tbwtail:
	// One whole vector left (lower half), then the partial one in the
	// upper half; or, none left, the partial one in the lower half.
	MOVQ  px+32(FP), R8
	MOVQ  pxstride+40(FP), AX
	MOVQ  py+48(FP), R9
	TESTQ CX, CX
	JZ    tbwpartlo
	TB_ACC(0, Y0, Y1, Y2, Y3)
	TESTQ R8, R8
	JZ    tbwfold
	MOVQ  R8, R10
	MOVQ  R9, DI
	TB_ROWS
	TB_ACC(0, Y4, Y5, Y6, Y7)
	JMP   tbwfold

tbwpartlo:
	TESTQ R8, R8
	JZ    tbwfold
	MOVQ  R8, R10
	MOVQ  R9, DI
	TB_ROWS
	TB_ACC(0, Y0, Y1, Y2, Y3)

tbwfold:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3

tbdone:
	TB_HSUM(Y0, X0, 0)
	TB_HSUM(Y1, X1, 4)
	TB_HSUM(Y2, X2, 8)
	TB_HSUM(Y3, X3, 12)
	VZEROUPPER
	RET

// maskLow<>: word m is the 16-lane mask of lanes 0..m-1, (1<<m)-1.
DATA maskLow<>+0(SB)/8, $0x0007000300010000
DATA maskLow<>+8(SB)/8, $0x007f003f001f000f
DATA maskLow<>+16(SB)/8, $0x07ff03ff01ff00ff
DATA maskLow<>+24(SB)/8, $0x7fff3fff1fff0fff
GLOBL maskLow<>(SB), RODATA|NOPTR, $32

// func dotF16RowsQ16(x *byte, xstride, rows int, y *float32, ystride int, ns *int32, nq int, out *float32, ostride int)
//
// dotF16Sum16 for several vectors y against several rows of x, the rows
// loaded once for all of them: for row r (rows rows, xstride bytes apart)
// and vector j < nq (ystride bytes apart, ns[j] elements, the row's first
// ns[j] f16 taken), *(out + j*ostride + 4*r) gets dotF16Sum16's sum of
// ns[j]/16 whole vectors and the partial last one, whose lanes past
// ns[j]%16 are zeros on both sides (masked loads: the padding dotF16Sum's
// px and py give), each in dotF16Sum16's order and tree. The products are
// fused multiply-adds, which round like dotF16Sum16's multiply and add:
// the products of two f16 values are exact in f32.
TEXT ·dotF16RowsQ16(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), R10
	MOVQ xstride+8(FP), R11
	MOVQ rows+16(FP), BX
	MOVQ out+56(FP), R8
	LEAQ maskLow<>(SB), R9

q16row:
	TESTQ BX, BX
	JZ    q16done
	PREFETCHT0 (R10)(R11*8)
	PREFETCHT0 64(R10)(R11*8)
	MOVQ  nq+48(FP), R12
	MOVQ  ns+40(FP), R13
	MOVQ  y+24(FP), R14
	MOVQ  R8, DX

q16query:
	TESTQ R12, R12
	JZ    q16next
	MOVQ  R10, SI
	MOVQ  R14, DI
	MOVLQZX (R13), AX
	MOVQ  AX, CX
	SHRQ  $4, CX
	ANDQ  $15, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

q16vec:
	CMPQ CX, $4
	JLT  q16tail
	VCVTPH2PS (SI), Z8
	VFMADD231PS (DI), Z8, Z0
	VCVTPH2PS 32(SI), Z9
	VFMADD231PS 64(DI), Z9, Z1
	VCVTPH2PS 64(SI), Z10
	VFMADD231PS 128(DI), Z10, Z2
	VCVTPH2PS 96(SI), Z11
	VFMADD231PS 192(DI), Z11, Z3
	ADDQ $128, SI
	ADDQ $256, DI
	SUBQ $4, CX
	JMP  q16vec

q16tail:
	KMOVW (R9)(AX*2), K1
	TESTQ CX, CX
	JZ    q16p0
	VCVTPH2PS (SI), Z8
	VFMADD231PS (DI), Z8, Z0
	CMPQ CX, $1
	JEQ  q16p1
	VCVTPH2PS 32(SI), Z8
	VFMADD231PS 64(DI), Z8, Z1
	CMPQ CX, $2
	JEQ  q16p2
	VCVTPH2PS 64(SI), Z8
	VFMADD231PS 128(DI), Z8, Z2
	TESTQ AX, AX
	JZ    q16reduce
	VCVTPH2PS.Z 96(SI), K1, Z8
	VMOVUPS.Z 192(DI), K1, Z9
	VFMADD231PS Z9, Z8, Z3
	JMP  q16reduce

q16p0:
	TESTQ AX, AX
	JZ    q16reduce
	VCVTPH2PS.Z (SI), K1, Z8
	VMOVUPS.Z (DI), K1, Z9
	VFMADD231PS Z9, Z8, Z0
	JMP  q16reduce

q16p1:
	TESTQ AX, AX
	JZ    q16reduce
	VCVTPH2PS.Z 32(SI), K1, Z8
	VMOVUPS.Z 64(DI), K1, Z9
	VFMADD231PS Z9, Z8, Z1
	JMP  q16reduce

q16p2:
	TESTQ AX, AX
	JZ    q16reduce
	VCVTPH2PS.Z 64(SI), K1, Z8
	VMOVUPS.Z 128(DI), K1, Z9
	VFMADD231PS Z9, Z8, Z2

q16reduce:
	VADDPS Z2, Z0, Z0 // acc0+acc2
	VADDPS Z3, Z1, Z1 // acc1+acc3
	VADDPS Z1, Z0, Z0 // v
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0 // a
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0 // b
	VPERMILPS $0x4E, X0, X1
	VADDPS X1, X0, X0 // b0+b2, b1+b3
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	MOVSS X0, (DX)
	ADDQ  ostride+64(FP), DX
	ADDQ  ystride+32(FP), R14
	ADDQ  $4, R13
	DECQ  R12
	JMP   q16query

q16next:
	ADDQ $4, R8
	ADDQ R11, R10
	DECQ BX
	JMP  q16row

q16done:
	VZEROUPPER
	RET
