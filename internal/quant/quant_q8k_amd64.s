//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// The Q8_K activation encoder.

// q8kPerm<> undoes the lane interleaving of VPACKUSDW+VPACKUSWB.
DATA q8kPerm<>+0(SB)/8, $0x0000000400000000
DATA q8kPerm<>+8(SB)/8, $0x0000000500000001
DATA q8kPerm<>+16(SB)/8, $0x0000000600000002
DATA q8kPerm<>+24(SB)/8, $0x0000000700000003
GLOBL q8kPerm<>(SB), RODATA|NOPTR, $32

// Q8K_QUANT8 turns the 8 floats in Y into nearest_int(x*iscale) capped at 127,
// keeping the low byte of each dword (C's int→int8_t conversion).
#define Q8K_QUANT8(Y) \
	VMULPS Y5, Y, Y; \
	VADDPS Y14, Y, Y; \
	VPAND Y13, Y, Y; \
	VPSUBD Y12, Y, Y; \
	VPMINSD Y11, Y, Y; \
	VPAND Y8, Y, Y

// func quantizeQ8KAVX2(dst *byte, x *float32, nb int) int
//
// It encodes blocks until it meets one holding a NaN, and returns the number
// of blocks done; the caller encodes that block with the reference loop.
TEXT ·quantizeQ8KAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	XORQ R8, R8
	MOVL $0x7FFFFFFF, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15 // abs mask
	MOVL $0x4B400000, AX // 12582912.0
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x007FFFFF, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x00400000, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $127, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	MOVL $0x80808080, AX
	VMOVD AX, X10
	VPBROADCASTD X10, Y10
	MOVL $0xFF, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	VMOVDQU q8kPerm<>(SB), Y9

q8kblock:
	CMPQ R8, CX
	JGE  q8kdone

	// Pass 1: largest magnitude, and any NaN.
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ R9, R9

q8kmax:
	VMOVUPS (SI)(R9*1), Y2
	VANDPS Y15, Y2, Y3
	VMAXPS Y3, Y0, Y0
	VCMPPS $3, Y2, Y2, Y4
	VORPS Y4, Y1, Y1
	ADDQ $32, R9
	CMPQ R9, $1024
	JLT  q8kmax

	VMOVMSKPS Y1, AX
	TESTL AX, AX
	JNZ   q8kdone
	VEXTRACTF128 $1, Y0, X2
	VMAXPS X2, X0, X0
	VPERMILPS $0x4E, X0, X2
	VMAXPS X2, X0, X0
	VPERMILPS $0xB1, X0, X2
	VMAXPS X2, X0, X0 // X0 = amax
	VXORPS X2, X2, X2
	VUCOMISS X2, X0
	JNE q8knonzero

	// All zero: d = 0, quants and bsums 0.
	VPXOR Y2, Y2, Y2
	VMOVDQU Y2, 0(DI)
	VMOVDQU Y2, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y2, 96(DI)
	VMOVDQU Y2, 128(DI)
	VMOVDQU Y2, 160(DI)
	VMOVDQU Y2, 192(DI)
	VMOVDQU Y2, 224(DI)
	VMOVDQU Y2, 256(DI)
	MOVL $0, 288(DI)
	JMP  q8knext

q8knonzero:
	// The first value whose magnitude is amax.
	VBROADCASTSS X0, Y0
	XORQ R9, R9

q8kfind:
	VMOVUPS (SI)(R9*4), Y2
	VANDPS Y15, Y2, Y3
	VCMPPS $0, Y0, Y3, Y4
	VMOVMSKPS Y4, AX
	TESTL AX, AX
	JNZ   q8kfound
	ADDQ $8, R9
	JMP  q8kfind

q8kfound:
	BSFL AX, AX
	ADDQ AX, R9
	VMOVSS (SI)(R9*4), X6 // max
	MOVL $0xC2FE0000, AX // -127.0
	VMOVD AX, X5
	VDIVSS X6, X5, X5 // iscale = -127/max
	MOVL $0x3F800000, AX // 1.0
	VMOVD AX, X7
	VDIVSS X5, X7, X7 // d = 1/iscale
	VMOVSS X7, 0(DI)
	VBROADCASTSS X5, Y5

	// Pass 2: 32 values per step: quants and two bsums.
	XORQ R9, R9 // byte offset into x
	XORQ R10, R10 // byte offset into qs
	XORQ R11, R11 // byte offset into bsums

q8kquant:
	VMOVUPS 0(SI)(R9*1), Y0
	VMOVUPS 32(SI)(R9*1), Y1
	VMOVUPS 64(SI)(R9*1), Y2
	VMOVUPS 96(SI)(R9*1), Y3
	Q8K_QUANT8(Y0)
	Q8K_QUANT8(Y1)
	Q8K_QUANT8(Y2)
	Q8K_QUANT8(Y3)
	VPACKUSDW Y1, Y0, Y0
	VPACKUSDW Y3, Y2, Y2
	VPACKUSWB Y2, Y0, Y0
	VPERMD Y0, Y9, Y0
	VMOVDQU Y0, 4(DI)(R10*1)
	VPXOR Y10, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPSADBW Y1, Y0, Y0
	VPSHUFD $0x4E, Y0, Y1
	VPADDQ Y1, Y0, Y0
	VMOVD X0, AX
	SUBL $2048, AX
	MOVW AX, 260(DI)(R11*1)
	VEXTRACTI128 $1, Y0, X1
	VMOVD X1, AX
	SUBL $2048, AX
	MOVW AX, 262(DI)(R11*1)
	ADDQ $128, R9
	ADDQ $32, R10
	ADDQ $4, R11
	CMPQ R9, $1024
	JLT  q8kquant

q8knext:
	ADDQ $1024, SI
	ADDQ $292, DI
	INCQ R8
	JMP  q8kblock

q8kdone:
	VZEROUPPER
	MOVQ R8, ret+24(FP)
	RET
