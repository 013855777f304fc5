//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// Q4_0, Q5_0 and Q8_0 times Q8_0.

// The Q4_0/Q5_0/Q8_0 kernels take four blocks per step: the four exact
// integer sums are reduced together and scaled in four float32 lanes (each
// lane the same rounded products as the scalar loop), then added to the
// running sum one block at a time, in block order.

// HSUM4_F reduces the int32 lanes of Y1, Y6, Y7, Y8 (blocks 0..3) to four
// float32 block sums in X1.
#define HSUM4_F \
	VPHADDD Y6, Y1, Y1; \
	VPHADDD Y8, Y7, Y7; \
	VPHADDD Y7, Y1, Y1; \
	VEXTRACTI128 $1, Y1, X2; \
	VPADDD X2, X1, X1; \
	VCVTDQ2PS X1, X1

// F16X4 widens the four f16 at o0..o3(R) into the float32 lanes of X.
#define F16X4(R, o0, o1, o2, o3, X) \
	MOVWLZX o0(R), BX; \
	VMOVD BX, X; \
	VPINSRW $1, o1(R), X, X; \
	VPINSRW $2, o2(R), X, X; \
	VPINSRW $3, o3(R), X, X; \
	VCVTPH2PS X, X

// ADD4 adds the four lanes of X1 to X0, lane 0 first.
#define ADD4 \
	VADDSS X1, X0, X0; \
	VMOVSHDUP X1, X2; \
	VADDSS X2, X0, X0; \
	VPERMILPS $2, X1, X2; \
	VADDSS X2, X0, X0; \
	VPERMILPS $3, X1, X2; \
	VADDSS X2, X0, X0

// Q80_BLOCK leaves the int32 lanes of one Q8_0·Q8_0 block in Yr.
#define Q80_BLOCK(ow, ow2, Yr) \
	VPMOVSXBW ow(SI), Y2; \
	VPMOVSXBW ow2(SI), Y3; \
	VPMOVSXBW ow(DI), Y4; \
	VPMOVSXBW ow2(DI), Y5; \
	VPMADDWD Y4, Y2, Y2; \
	VPMADDWD Y5, Y3, Y3; \
	VPADDD Y3, Y2, Yr

// func dotQ80AVX2(w, a *byte, nb int) float32
TEXT ·dotQ80AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS X0, X0, X0

q80loop4:
	CMPQ CX, $4
	JLT  q80loop
	Q80_BLOCK(2, 18, Y1)
	Q80_BLOCK(36, 52, Y6)
	Q80_BLOCK(70, 86, Y7)
	Q80_BLOCK(104, 120, Y8)
	HSUM4_F
	F16X4(SI, 0, 34, 68, 102, X3)
	F16X4(DI, 0, 34, 68, 102, X4)
	VMULPS X4, X3, X3 // dw*da
	VMULPS X3, X1, X1 // sumi*(dw*da)
	ADD4
	ADDQ $136, SI
	ADDQ $136, DI
	SUBQ $4, CX
	JMP  q80loop4

q80loop:
	TESTQ CX, CX
	JZ q80done
	VPMOVSXBW 2(SI), Y2
	VPMOVSXBW 18(SI), Y3
	VPMOVSXBW 2(DI), Y4
	VPMOVSXBW 18(DI), Y5
	VPMADDWD Y4, Y2, Y2
	VPMADDWD Y5, Y3, Y3
	VPADDD Y3, Y2, Y1
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi

	MOVWLZX 0(SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9 // dw
	MOVWLZX 0(DI), BX
	VMOVD BX, X10
	VCVTPH2PS X10, X10 // da
	VMULSS X10, X9, X9 // dw*da
	VCVTSI2SSL AX, X11, X11
	VMULSS X9, X11, X11 // sumi*(dw*da)
	VADDSS X11, X0, X0

	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q80loop

q80done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q40_SUMI leaves in AX the exact Σ (q-bias)·q8 of one 32-weight block whose
// unsigned quants (0..31) are in Y2 and whose q8 quants start at off(DI);
// Y13 holds the bias bytes.
#define Q40_SUMI(off) \
	VMOVDQU off(DI), Y4; \
	VPMADDUBSW Y4, Y2, Y2; \
	VPMADDUBSW Y4, Y13, Y3; \
	VPSUBW Y3, Y2, Y2; \
	VPMADDWD Y14, Y2, Y1; \
	HSUM_D(Y1, X1, X2); \
	VMOVD X1, AX

// NIBBLES32 loads the 16 bytes at off(SI) as 32 unsigned quants: low
// nibbles are weights 0..15, high nibbles 16..31.
#define NIBBLES32(off) \
	VMOVDQU off(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND Y15, Y2, Y2

// Q40_BLOCK leaves the int32 lanes of one block in Yr: unsigned quants from
// NIBBLES32 (plus, for Q5_0, the 5th bits already or-ed into Y2) times the
// q8 at oa(DI), minus the bias (Y13) times the same q8.
#define Q40_TAIL(oa, Yr) \
	VMOVDQU oa(DI), Y4; \
	VPMADDUBSW Y4, Y2, Y2; \
	VPMADDUBSW Y4, Y13, Y3; \
	VPSUBW Y3, Y2, Y2; \
	VPMADDWD Y14, Y2, Yr

// func dotQ40AVX2(w, a *byte, nb int) float32
TEXT ·dotQ40AVX2(SB), NOSPLIT, $0-28
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
	MOVL $0x08080808, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13

q40loop4:
	CMPQ CX, $4
	JLT  q40loop
	NIBBLES32(2)
	Q40_TAIL(2, Y1)
	NIBBLES32(20)
	Q40_TAIL(36, Y6)
	NIBBLES32(38)
	Q40_TAIL(70, Y7)
	NIBBLES32(56)
	Q40_TAIL(104, Y8)
	HSUM4_F
	F16X4(SI, 0, 18, 36, 54, X3)
	F16X4(DI, 0, 34, 68, 102, X4)
	VMULPS X3, X1, X1 // sumi*dw
	VMULPS X4, X1, X1 // (sumi*dw)*da
	ADD4
	ADDQ $72, SI
	ADDQ $136, DI
	SUBQ $4, CX
	JMP  q40loop4

q40loop:
	TESTQ CX, CX
	JZ q40done
	NIBBLES32(2)
	Q40_SUMI(2)

	MOVWLZX 0(SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9 // dw
	MOVWLZX 0(DI), BX
	VMOVD BX, X10
	VCVTPH2PS X10, X10 // da
	VCVTSI2SSL AX, X11, X11
	VMULSS X9, X11, X11 // sumi*dw
	VMULSS X10, X11, X11 // (sumi*dw)*da
	VADDSS X11, X0, X0

	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q40loop

q40done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// bitsShuf<> spreads byte k/8 of a dword to byte k; bitsMask<> then sets
// every bit but bit k%8, so byte k compares equal to 0xFF iff bit k was set.
DATA bitsShuf<>+0(SB)/8, $0x0000000000000000
DATA bitsShuf<>+8(SB)/8, $0x0101010101010101
DATA bitsShuf<>+16(SB)/8, $0x0202020202020202
DATA bitsShuf<>+24(SB)/8, $0x0303030303030303
GLOBL bitsShuf<>(SB), RODATA|NOPTR, $32
DATA bitsMask<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsMask<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsMask<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitsMask<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bitsMask<>(SB), RODATA|NOPTR, $32

// Q50_BITS ors 16 into the quants in Y2 where the 5th bit (the qh dword at
// off(SI)) is set.
#define Q50_BITS(off) \
	VPBROADCASTD off(SI), Y5; \
	VPSHUFB Y11, Y5, Y5; \
	VPOR Y10, Y5, Y5; \
	VPCMPEQB Y12, Y5, Y5; \
	VPAND Y13, Y5, Y5; \
	VPOR Y5, Y2, Y2

// func dotQ50AVX2(w, a *byte, nb int) float32
TEXT ·dotQ50AVX2(SB), NOSPLIT, $0-28
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
	VPBROADCASTD X13, Y13 // bias 16, also the 5th-bit value
	VPCMPEQB Y12, Y12, Y12 // all ones
	VMOVDQU bitsShuf<>(SB), Y11
	VMOVDQU bitsMask<>(SB), Y10

q50loop4:
	CMPQ CX, $4
	JLT  q50loop
	NIBBLES32(6)
	Q50_BITS(2)
	Q40_TAIL(2, Y1)
	NIBBLES32(28)
	Q50_BITS(24)
	Q40_TAIL(36, Y6)
	NIBBLES32(50)
	Q50_BITS(46)
	Q40_TAIL(70, Y7)
	NIBBLES32(72)
	Q50_BITS(68)
	Q40_TAIL(104, Y8)
	HSUM4_F
	F16X4(SI, 0, 22, 44, 66, X3)
	F16X4(DI, 0, 34, 68, 102, X4)
	VMULPS X4, X3, X3 // dw*da
	VMULPS X3, X1, X1 // (dw*da)*sumi
	ADD4
	ADDQ $88, SI
	ADDQ $136, DI
	SUBQ $4, CX
	JMP  q50loop4

q50loop:
	TESTQ CX, CX
	JZ q50done
	VPBROADCASTD 2(SI), Y5
	VPSHUFB Y11, Y5, Y5
	VPOR Y10, Y5, Y5
	VPCMPEQB Y12, Y5, Y5
	VPAND Y13, Y5, Y5 // 16 where the 5th bit is set
	NIBBLES32(6)
	VPOR Y5, Y2, Y2
	Q40_SUMI(2)

	MOVWLZX 0(SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9 // dw
	MOVWLZX 0(DI), BX
	VMOVD BX, X8
	VCVTPH2PS X8, X8 // da
	VMULSS X8, X9, X9 // dw*da
	VCVTSI2SSL AX, X7, X7
	VMULSS X7, X9, X9 // (dw*da)*sumi
	VADDSS X9, X0, X0

	ADDQ $22, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q50loop

q50done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q80_COL leaves the int32 lanes of one Q8_0 block (weights sign-extended in
// Y10/Y11) times the activation block at base in ACC.
#define Q80_COL(o1, o2, ACC) \
	VPMOVSXBW o1, Y4; \
	VPMOVSXBW o2, Y5; \
	VPMADDWD Y4, Y10, Y4; \
	VPMADDWD Y5, Y11, Y5; \
	VPADDD Y5, Y4, ACC

// func dotQ80AVX2x4(dst *float32, w, a *byte, stride, nb int)
//
// One Q8_0 row times four Q8_0 vectors (vector c at a + c*stride): each
// weight block is sign-extended once; per vector and block the same exact
// sum and the same float32 steps as dotQ80AVX2, lane c for vector c.
TEXT ·dotQ80AVX2x4(SB), NOSPLIT, $0-40
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	VXORPS X12, X12, X12

q80x4loop:
	TESTQ CX, CX
	JZ    q80x4done
	ACT_PTRS
	VPMOVSXBW 2(SI), Y10
	VPMOVSXBW 18(SI), Y11
	Q80_COL(2(DI), 18(DI), Y0)
	Q80_COL(2(DI)(R13*1), 18(DI)(R13*1), Y1)
	Q80_COL(2(DI)(R13*2), 18(DI)(R13*2), Y2)
	Q80_COL(2(DX), 18(DX), Y3)
	REDUCE4
	VCVTDQ2PS X0, X0 // sumi

	MOVWLZX (DI), BX
	VMOVD BX, X8
	VPINSRW $1, (DI)(R13*1), X8, X8
	VPINSRW $2, (DI)(R13*2), X8, X8
	VPINSRW $3, (DX), X8, X8
	VCVTPH2PS X8, X8 // da
	MOVWLZX (SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9
	VBROADCASTSS X9, X9 // dw
	VMULPS X8, X9, X9   // dw*da
	VMULPS X9, X0, X0   // sumi*(dw*da)
	VADDPS X0, X12, X12

	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q80x4loop

q80x4done:
	MOVQ dst+0(FP), AX
	VMOVUPS X12, (AX)
	VZEROUPPER
	RET
