//go:build amd64 && !purego

#include "textflag.h"

// func f32ToF16x8(dst *byte, src *float32, octs int)
//
// VCVTPS2PH with rounding to nearest even (imm 0): the bits of F32ToF16
// for every non-NaN input; a NaN becomes a quiet NaN of the same sign.
TEXT ·f32ToF16x8(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ octs+16(FP), CX
	TESTQ CX, CX
	JZ done

loop:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X1
	VMOVDQU X1, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	RET
