//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// Q4_0, Q5_0 and Q8_0 times Q8_0, in ggml's orders (see order.go).
//
// dotQ40AVX2, dotQ50AVX2, dotQ80AVX2: eight float32 lanes in Y0. Lane j
// takes the exact int32 sum of the products at positions 4j..4j+3 of each
// block, converted, times dw*da, added with one FMA (VFMADD231PS); HSUM8
// reduces the lanes as ggml's hsum_float_8. dotQ80AMXAVX2, dotQ40AMXAVX2:
// one float32 accumulator, acc = fma(float32(block sum), dw*da, acc).

// BLOCK_SCALE leaves the float32 dw*da of the blocks at 0(SI) and 0(DI) in
// X9 and broadcast in Y9 (BX, X8 scratch).
#define BLOCK_SCALE \
	MOVWLZX 0(SI), BX; \
	VMOVD BX, X9; \
	VCVTPH2PS X9, X9; \
	MOVWLZX 0(DI), BX; \
	VMOVD BX, X8; \
	VCVTPH2PS X8, X8; \
	VMULSS X8, X9, X9; \
	VBROADCASTSS X9, Y9

// LANES_FMA converts the int32 lanes of Y1 and adds them times Y9 to Y0.
#define LANES_FMA \
	VCVTDQ2PS Y1, Y1; \
	VFMADD231PS Y9, Y1, Y0

// Q80_PAIRS leaves in Y2 and Y3 the int32 sums of adjacent products of
// weights 0..15 and 16..31 of the blocks at SI and DI.
#define Q80_PAIRS \
	VPMOVSXBW 2(SI), Y2; \
	VPMOVSXBW 18(SI), Y3; \
	VPMOVSXBW 2(DI), Y4; \
	VPMOVSXBW 18(DI), Y5; \
	VPMADDWD Y4, Y2, Y2; \
	VPMADDWD Y5, Y3, Y3

// func dotQ80AVX2(w, a *byte, nb int) float32
TEXT ·dotQ80AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0

q80loop:
	TESTQ CX, CX
	JZ    q80done
	Q80_PAIRS
	VPHADDD Y3, Y2, Y1 // lanes 0,1,4,5 | 2,3,6,7
	BLOCK_SCALE
	LANES_FMA
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q80loop

q80done:
	VPERMQ $0xD8, Y0, Y0 // lanes back to 0..7
	HSUM8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ80AMXAVX2(w, a *byte, nb int) float32
TEXT ·dotQ80AMXAVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS X0, X0, X0

q80amxloop:
	TESTQ CX, CX
	JZ    q80amxdone
	Q80_PAIRS
	VPADDD Y3, Y2, Y1
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi
	BLOCK_SCALE
	VCVTSI2SSL AX, X11, X11
	VFMADD231SS X9, X11, X0 // acc += sumi*(dw*da), one rounding
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q80amxloop

q80amxdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// NIBBLES32 loads the 16 bytes at off(SI) as 32 unsigned quants: low
// nibbles are weights 0..15, high nibbles 16..31.
#define NIBBLES32(off) \
	VMOVDQU off(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND Y15, Y2, Y2

// Q40_TAIL leaves the int32 lanes of one block in Yr: unsigned quants from
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

q40loop:
	TESTQ CX, CX
	JZ    q40done
	NIBBLES32(2)
	Q40_TAIL(2, Y1)
	BLOCK_SCALE
	LANES_FMA
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q40loop

q40done:
	HSUM8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ40AMXAVX2(w, a *byte, nb int) float32
TEXT ·dotQ40AMXAVX2(SB), NOSPLIT, $0-28
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

q40amxloop:
	TESTQ CX, CX
	JZ    q40amxdone
	NIBBLES32(2)
	Q40_TAIL(2, Y1)
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi
	BLOCK_SCALE
	VCVTSI2SSL AX, X11, X11
	VFMADD231SS X9, X11, X0 // acc += sumi*(dw*da), one rounding
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q40amxloop

q40amxdone:
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

q50loop:
	TESTQ CX, CX
	JZ    q50done
	NIBBLES32(6)
	Q50_BITS(2)
	Q40_TAIL(2, Y1)
	BLOCK_SCALE
	LANES_FMA
	ADDQ $22, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q50loop

q50done:
	HSUM8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q80_4PLAIN is dotQ80AVX2's block step for one of four vectors (its d at
// da, its quants at lo and hi; the weights sign-extended in Y10/Y11, dw in
// X9): the same int32 lanes, dw*da, one FMA into ACC.
#define Q80_4PLAIN(da, lo, hi, ACC) \
	VPMOVSXBW lo, Y4; \
	VPMOVSXBW hi, Y5; \
	VPMADDWD Y4, Y10, Y4; \
	VPMADDWD Y5, Y11, Y5; \
	VPHADDD Y5, Y4, Y1; \
	MOVWLZX da, BX; \
	VMOVD BX, X8; \
	VCVTPH2PS X8, X8; \
	VMULSS X8, X9, X7; \
	VBROADCASTSS X7, Y7; \
	VCVTDQ2PS Y1, Y1; \
	VFMADD231PS Y7, Y1, ACC

// Q80_4AMX leaves one vector's int32 products of the block (weights in
// Y10/Y11) in ACC, for REDUCE4.
#define Q80_4AMX(lo, hi, ACC) \
	VPMOVSXBW lo, Y4; \
	VPMOVSXBW hi, Y5; \
	VPMADDWD Y4, Y10, Y4; \
	VPMADDWD Y5, Y11, Y5; \
	VPADDD Y5, Y4, ACC

// Q80_4HSUM reduces the plain-order lanes of ACC as dotQ80AVX2 does and
// stores the sum at dst.
#define Q80_4HSUM(ACC, dst) \
	VPERMQ $0xD8, ACC, Y0; \
	HSUM8; \
	VMOVSS X0, dst

// func dotQ80AVX2x4(out *[4]float32, w, a *byte, stride, nb, amx int)
//
// One Q8_0 row times four Q8_0 vectors (vector c at a + c*stride), in the
// row kernels' orders: each weight block is sign-extended once. amx == 0:
// dotQ80AVX2's lanes per vector in Y12..Y15; amx != 0: dotQ80AMXAVX2's
// accumulator per vector in lane c of X12. out[c] gets vector c's result.
TEXT ·dotQ80AVX2x4(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVQ amx+40(FP), R8
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

q80x4loop:
	TESTQ CX, CX
	JZ    q80x4done
	ACT_PTRS
	VPMOVSXBW 2(SI), Y10
	VPMOVSXBW 18(SI), Y11
	MOVWLZX (SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9 // dw
	TESTQ R8, R8
	JNZ   q80x4amx
	Q80_4PLAIN((DI), 2(DI), 18(DI), Y12)
	Q80_4PLAIN((DI)(R13*1), 2(DI)(R13*1), 18(DI)(R13*1), Y13)
	Q80_4PLAIN((DI)(R13*2), 2(DI)(R13*2), 18(DI)(R13*2), Y14)
	Q80_4PLAIN((DX), 2(DX), 18(DX), Y15)
	JMP   q80x4next

q80x4amx: // ggml's AMX order, lane c = vector c
	Q80_4AMX(2(DI), 18(DI), Y0)
	Q80_4AMX(2(DI)(R13*1), 18(DI)(R13*1), Y1)
	Q80_4AMX(2(DI)(R13*2), 18(DI)(R13*2), Y2)
	Q80_4AMX(2(DX), 18(DX), Y3)
	REDUCE4
	VCVTDQ2PS X0, X0 // sumi
	MOVWLZX (DI), BX
	VMOVD BX, X8
	VPINSRW $1, (DI)(R13*1), X8, X8
	VPINSRW $2, (DI)(R13*2), X8, X8
	VPINSRW $3, (DX), X8, X8
	VCVTPH2PS X8, X8 // da
	VBROADCASTSS X9, X7
	VMULPS X8, X7, X7       // dw*da
	VFMADD231PS X7, X0, X12 // acc += sumi*(dw*da)

q80x4next:
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q80x4loop

q80x4done:
	TESTQ R8, R8
	JNZ   q80x4amxdone
	Q80_4HSUM(Y12, 0(AX))
	Q80_4HSUM(Y13, 4(AX))
	Q80_4HSUM(Y14, 8(AX))
	Q80_4HSUM(Y15, 12(AX))
	JMP   q80x4ret

q80x4amxdone:
	VMOVUPS X12, (AX)

q80x4ret:
	VZEROUPPER
	RET
