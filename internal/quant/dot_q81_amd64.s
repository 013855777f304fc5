//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// Q4_1 and Q5_1 times Q8_1, one block per step. Per block, as dotQ4_1Ref:
// sum += (dw*da)*float32(sumi) + mw*sa, each product and sum rounded to
// float32 in that order.

// Q41_NIBBLES loads the 16 bytes at off(SI) as 32 unsigned quants in Y2:
// low nibbles are weights 0..15, high nibbles 16..31 (Y15 = 0x0F bytes).
#define Q41_NIBBLES(off) \
	VMOVDQU off(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND Y15, Y2, Y2

// Q41_SUMI leaves in AX the exact Σ q·q8 of one block whose unsigned quants
// (0..31) are in Y2 and whose q8 quants start at 4(DI) (Y14 = int16 ones).
#define Q41_SUMI \
	VMOVDQU 4(DI), Y4; \
	VPMADDUBSW Y4, Y2, Y2; \
	VPMADDWD Y14, Y2, Y1; \
	HSUM_D(Y1, X1, X2); \
	VMOVD X1, AX

// Q41_SCALE adds (dw*da)*float32(AX) + mw*sa to X0 for the weight block at
// SI and the activation block at DI.
#define Q41_SCALE \
	MOVWLZX 0(SI), BX; \
	VMOVD BX, X9; \
	VCVTPH2PS X9, X9; \
	MOVWLZX 0(DI), BX; \
	VMOVD BX, X8; \
	VCVTPH2PS X8, X8; \
	VMULSS X8, X9, X9; \
	VCVTSI2SSL AX, X7, X7; \
	VMULSS X7, X9, X9; \
	MOVWLZX 2(SI), BX; \
	VMOVD BX, X6; \
	VCVTPH2PS X6, X6; \
	MOVWLZX 2(DI), BX; \
	VMOVD BX, X5; \
	VCVTPH2PS X5, X5; \
	VMULSS X5, X6, X6; \
	VADDSS X6, X9, X9; \
	VADDSS X9, X0, X0

// func dotQ41AVX2(w, a *byte, nb int) float32
TEXT ·dotQ41AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS X0, X0, X0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14

q41loop:
	TESTQ CX, CX
	JZ q41done
	Q41_NIBBLES(4)
	Q41_SUMI
	Q41_SCALE
	ADDQ $20, SI
	ADDQ $36, DI
	DECQ CX
	JMP  q41loop

q41done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// bits1Shuf<> spreads byte k/8 of a dword to byte k; bits1Mask<> then sets
// every bit but bit k%8, so byte k compares equal to 0xFF iff bit k was set.
DATA bits1Shuf<>+0(SB)/8, $0x0000000000000000
DATA bits1Shuf<>+8(SB)/8, $0x0101010101010101
DATA bits1Shuf<>+16(SB)/8, $0x0202020202020202
DATA bits1Shuf<>+24(SB)/8, $0x0303030303030303
GLOBL bits1Shuf<>(SB), RODATA|NOPTR, $32
DATA bits1Mask<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bits1Mask<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bits1Mask<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bits1Mask<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bits1Mask<>(SB), RODATA|NOPTR, $32

// func dotQ51AVX2(w, a *byte, nb int) float32
TEXT ·dotQ51AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS X0, X0, X0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x10101010, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13 // the 5th-bit value
	VPCMPEQB Y12, Y12, Y12 // all ones
	VMOVDQU bits1Shuf<>(SB), Y11
	VMOVDQU bits1Mask<>(SB), Y10

q51loop:
	TESTQ CX, CX
	JZ q51done
	VPBROADCASTD 4(SI), Y5
	VPSHUFB Y11, Y5, Y5
	VPOR Y10, Y5, Y5
	VPCMPEQB Y12, Y5, Y5
	VPAND Y13, Y5, Y5 // 16 where the 5th bit is set
	Q41_NIBBLES(8)
	VPOR Y5, Y2, Y2
	Q41_SUMI
	Q41_SCALE
	ADDQ $24, SI
	ADDQ $36, DI
	DECQ CX
	JMP  q51loop

q51done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
