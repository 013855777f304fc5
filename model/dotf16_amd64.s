//go:build amd64 && !purego

#include "textflag.h"

// The vector parts of simd.dotF16 and simd.reduceVectors. Each f16 of x is
// widened with VCVTPH2PS (exact), multiplied by the f32 of y (exact: both
// are f16 values) and added into its lane's accumulator, one element per
// lane at a time, in order — the Go loop's lane arithmetic, eight lanes per
// instruction. The reductions add the same pairs in the same tree as the Go
// code. Accumulators are in memory as [4][16]float32: vector v of a 16-lane
// build is acc[v][0:16], of an 8-lane build acc[v][0:8].

// F16_ACC adds x[8k..8k+7]*y[8k..8k+7] into ACC.
#define F16_ACC(k, ACC) \
	VCVTPH2PS (16*k)(SI), Y8; \
	VMULPS (32*k)(DI), Y8, Y8; \
	VADDPS Y8, ACC, ACC

// func dotF16Vecs16(x *byte, y *float32, vecs int, acc *[4][16]float32)
//
// vecs whole 16-lane vectors; vector v goes into acc[v%4].
TEXT ·dotF16Vecs16(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ vecs+16(FP), CX
	MOVQ acc+24(FP), AX
	VMOVUPS 0(AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS 64(AX), Y2
	VMOVUPS 96(AX), Y3
	VMOVUPS 128(AX), Y4
	VMOVUPS 160(AX), Y5
	VMOVUPS 192(AX), Y6
	VMOVUPS 224(AX), Y7

v16loop:
	CMPQ CX, $4
	JLT  v16tail
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
	JMP  v16loop

v16tail:
	TESTQ CX, CX
	JZ    v16done
	F16_ACC(0, Y0)
	F16_ACC(1, Y1)
	CMPQ CX, $1
	JEQ  v16done
	F16_ACC(2, Y2)
	F16_ACC(3, Y3)
	CMPQ CX, $2
	JEQ  v16done
	F16_ACC(4, Y4)
	F16_ACC(5, Y5)

v16done:
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y3, 96(AX)
	VMOVUPS Y4, 128(AX)
	VMOVUPS Y5, 160(AX)
	VMOVUPS Y6, 192(AX)
	VMOVUPS Y7, 224(AX)
	VZEROUPPER
	RET

// func dotF16Vecs8(x *byte, y *float32, vecs int, acc *[4][16]float32)
//
// vecs whole 8-lane vectors; vector v goes into acc[v%4][0:8].
TEXT ·dotF16Vecs8(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ vecs+16(FP), CX
	MOVQ acc+24(FP), AX
	VMOVUPS 0(AX), Y0
	VMOVUPS 64(AX), Y1
	VMOVUPS 128(AX), Y2
	VMOVUPS 192(AX), Y3

v8loop:
	CMPQ CX, $4
	JLT  v8tail
	F16_ACC(0, Y0)
	F16_ACC(1, Y1)
	F16_ACC(2, Y2)
	F16_ACC(3, Y3)
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $4, CX
	JMP  v8loop

v8tail:
	TESTQ CX, CX
	JZ    v8done
	F16_ACC(0, Y0)
	CMPQ CX, $1
	JEQ  v8done
	F16_ACC(1, Y1)
	CMPQ CX, $2
	JEQ  v8done
	F16_ACC(2, Y2)

v8done:
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 64(AX)
	VMOVUPS Y2, 128(AX)
	VMOVUPS Y3, 192(AX)
	VZEROUPPER
	RET

// func reduceAcc16(acc *[4][16]float32) float32
//
// v = (acc0+acc2)+(acc1+acc3); a[i] = v[i]+v[i+8]; b[i] = a[i]+a[i+4];
// (b0+b2)+(b1+b3).
TEXT ·reduceAcc16(SB), NOSPLIT, $0-12
	MOVQ acc+0(FP), AX
	VMOVUPS 0(AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS 64(AX), Y2
	VMOVUPS 96(AX), Y3
	VADDPS 128(AX), Y0, Y0 // acc0+acc2, low lanes
	VADDPS 160(AX), Y1, Y1 // high lanes
	VADDPS 192(AX), Y2, Y2 // acc1+acc3
	VADDPS 224(AX), Y3, Y3
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
	MOVSS X0, ret+8(FP)
	RET

// func reduceAcc8(acc *[4][16]float32) float32
//
// v = (acc0+acc2)+(acc1+acc3); t[i] = v[i]+v[i+4]; (t0+t1)+(t2+t3).
TEXT ·reduceAcc8(SB), NOSPLIT, $0-12
	MOVQ acc+0(FP), AX
	VMOVUPS 0(AX), Y0
	VMOVUPS 64(AX), Y1
	VADDPS 128(AX), Y0, Y0 // acc0+acc2
	VADDPS 192(AX), Y1, Y1 // acc1+acc3
	VADDPS Y1, Y0, Y0      // v
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0 // t
	VMOVSHDUP X0, X1
	VADDPS X1, X0, X0 // t0+t1 in lane 0, t2+t3 in lane 2
	VPERMILPS $0x4E, X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+8(FP)
	RET
