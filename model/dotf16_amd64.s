//go:build amd64 && !purego

#include "textflag.h"

// The vector part of simd.dotF16: each f16 of x is widened with VCVTPH2PS
// (exact), multiplied by the f32 of y (exact: both are f16 values) and added
// into its lane's accumulator, one element per lane at a time, in order — the
// lane arithmetic of the Go loop, eight lanes per instruction.

// F16_ACC adds x[8k..8k+7]*y[8k..8k+7] into ACC.
#define F16_ACC(k, ACC) \
	VCVTPH2PS (16*k)(SI), Y8; \
	VMULPS (32*k)(DI), Y8, Y8; \
	VADDPS Y8, ACC, ACC

// func dotF16Groups16(x *byte, y *float32, groups int, acc *[4][16]float32)
//
// groups of 64 elements: four 16-lane vectors, vector v into acc[v].
TEXT ·dotF16Groups16(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ groups+16(FP), CX
	MOVQ acc+24(FP), AX
	VMOVUPS 0(AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS 64(AX), Y2
	VMOVUPS 96(AX), Y3
	VMOVUPS 128(AX), Y4
	VMOVUPS 160(AX), Y5
	VMOVUPS 192(AX), Y6
	VMOVUPS 224(AX), Y7

g16loop:
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
	DECQ CX
	JNZ  g16loop

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

// func dotF16Groups8(x *byte, y *float32, groups int, acc *[4][16]float32)
//
// groups of 32 elements: four 8-lane vectors, vector v into acc[v][0:8].
TEXT ·dotF16Groups8(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ groups+16(FP), CX
	MOVQ acc+24(FP), AX
	VMOVUPS 0(AX), Y0
	VMOVUPS 64(AX), Y1
	VMOVUPS 128(AX), Y2
	VMOVUPS 192(AX), Y3

g8loop:
	F16_ACC(0, Y0)
	F16_ACC(1, Y1)
	F16_ACC(2, Y2)
	F16_ACC(3, Y3)
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  g8loop

	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 64(AX)
	VMOVUPS Y2, 128(AX)
	VMOVUPS Y3, 192(AX)
	VZEROUPPER
	RET
