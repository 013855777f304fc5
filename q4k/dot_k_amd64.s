//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// K-quant row kernels: Q4_K, Q5_K, Q6_K times Q8_K, and four-vector forms
// of the Q4_K and Q6_K ones (the prefill shape).

// kScale<> holds eight VPSHUFB masks; mask j (at 32j) spreads int16 lane j
// (scale j of a Q4_K/Q5_K block) over all 16 lanes.
DATA kScale<>+0(SB)/8, $0x0100010001000100
DATA kScale<>+8(SB)/8, $0x0100010001000100
DATA kScale<>+16(SB)/8, $0x0100010001000100
DATA kScale<>+24(SB)/8, $0x0100010001000100
DATA kScale<>+32(SB)/8, $0x0302030203020302
DATA kScale<>+40(SB)/8, $0x0302030203020302
DATA kScale<>+48(SB)/8, $0x0302030203020302
DATA kScale<>+56(SB)/8, $0x0302030203020302
DATA kScale<>+64(SB)/8, $0x0504050405040504
DATA kScale<>+72(SB)/8, $0x0504050405040504
DATA kScale<>+80(SB)/8, $0x0504050405040504
DATA kScale<>+88(SB)/8, $0x0504050405040504
DATA kScale<>+96(SB)/8, $0x0706070607060706
DATA kScale<>+104(SB)/8, $0x0706070607060706
DATA kScale<>+112(SB)/8, $0x0706070607060706
DATA kScale<>+120(SB)/8, $0x0706070607060706
DATA kScale<>+128(SB)/8, $0x0908090809080908
DATA kScale<>+136(SB)/8, $0x0908090809080908
DATA kScale<>+144(SB)/8, $0x0908090809080908
DATA kScale<>+152(SB)/8, $0x0908090809080908
DATA kScale<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kScale<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kScale<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kScale<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kScale<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kScale<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kScale<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kScale<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kScale<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kScale<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kScale<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kScale<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kScale<>(SB), RODATA|NOPTR, $256

// K_SCALES puts the eight 6-bit scales (bytes of R8, R9) as int16 lanes
// 0..7 into both 128-bit lanes of Y14.
#define K_SCALES \
	MOVQ R9, BX; \
	SHLQ $32, BX; \
	ORQ  R8, BX; \
	VMOVQ BX, X14; \
	VPMOVZXBW X14, X14; \
	VINSERTI128 $1, X14, Y14, Y14

// Q4K_PAIR adds scale[2k]*Σ lo·q8 + scale[2k+1]*Σ hi·q8 for one 32-byte run
// of 4-bit quants (at off4(SI)) into the int32 lanes of Y1; mlo/mhi are the
// kScale<> offsets of scales 2k and 2k+1.
#define Q4K_PAIR(off4, off8lo, off8hi, mlo, mhi) \
	VMOVDQU off4(SI), Y2; \
	VPSRLW $4, Y2, Y3; \
	VPAND Y15, Y2, Y2; \
	VPAND Y15, Y3, Y3; \
	VMOVDQU off8lo(DI), Y4; \
	VPMADDUBSW Y4, Y2, Y2; \
	VMOVDQU off8hi(DI), Y4; \
	VPMADDUBSW Y4, Y3, Y3; \
	VPSHUFB kScale<>+mlo(SB), Y14, Y5; \
	VPMADDWD Y5, Y2, Y2; \
	VPSHUFB kScale<>+mhi(SB), Y14, Y5; \
	VPMADDWD Y5, Y3, Y3; \
	VPADDD Y2, Y1, Y1; \
	VPADDD Y3, Y1, Y1

// func dotQ4KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ4KAVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS X0, X0, X0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

q4kloop:
	TESTQ CX, CX
	JZ q4kdone

	// Unpack the 12 scale bytes: R8 = scales 0-3, R9 = scales 4-7,
	// R10 = mins 0-3, R11 = mins 4-7.
	MOVL 4(SI), R8
	MOVL 8(SI), R9
	MOVL 12(SI), R10
	MOVL R10, R11
	SHRL $4, R11
	ANDL $0x0F0F0F0F, R11
	MOVL R9, BX
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	ORL  BX, R11
	MOVL R9, R12
	ANDL $0x3F3F3F3F, R12
	MOVL R10, R9
	ANDL $0x0F0F0F0F, R9
	MOVL R8, BX
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	ORL  BX, R9
	MOVL R12, R10
	ANDL $0x3F3F3F3F, R8

	VPXOR Y1, Y1, Y1
	K_SCALES
	Q4K_PAIR(16, 4, 36, 0, 32)
	Q4K_PAIR(48, 68, 100, 64, 96)
	Q4K_PAIR(80, 132, 164, 128, 160)
	Q4K_PAIR(112, 196, 228, 192, 224)
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi

	// summ = Σ bsums[j]*mins[j/2]
	VMOVDQU 260(DI), Y6
	VEXTRACTI128 $1, Y6, X7
	VPHADDW X7, X6, X6
	VMOVD R10, X7
	VPINSRD $1, R11, X7, X7
	VPMOVZXBW X7, X7
	VPMADDWD X7, X6, X6
	VPSHUFD $0x4E, X6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0xB1, X6, X7
	VPADDD X7, X6, X6
	VMOVD X6, DX // summ

	VMOVSS (DI), X8 // da
	MOVWLZX 0(SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9 // dw
	MOVWLZX 2(SI), BX
	VMOVD BX, X10
	VCVTPH2PS X10, X10 // dminw
	VMULSS X8, X9, X9   // d = dw*da
	VMULSS X8, X10, X10 // dmin = dminw*da
	VCVTSI2SSL AX, X11, X11
	VMULSS X11, X9, X9 // d*sumi
	VCVTSI2SSL DX, X12, X12
	VMULSS X12, X10, X10 // dmin*summ
	VADDSS X9, X0, X0
	VSUBSS X10, X0, X0

	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q4kloop

q4kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// q6kScale<> holds four VPSHUFB masks; mask k (at 32k) spreads int16 scale
// 2k over the low 128-bit lane and scale 2k+1 over the high lane.
DATA q6kScale<>+0(SB)/8, $0x0100010001000100
DATA q6kScale<>+8(SB)/8, $0x0100010001000100
DATA q6kScale<>+16(SB)/8, $0x0302030203020302
DATA q6kScale<>+24(SB)/8, $0x0302030203020302
DATA q6kScale<>+32(SB)/8, $0x0504050405040504
DATA q6kScale<>+40(SB)/8, $0x0504050405040504
DATA q6kScale<>+48(SB)/8, $0x0706070607060706
DATA q6kScale<>+56(SB)/8, $0x0706070607060706
DATA q6kScale<>+64(SB)/8, $0x0908090809080908
DATA q6kScale<>+72(SB)/8, $0x0908090809080908
DATA q6kScale<>+80(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q6kScale<>+88(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q6kScale<>+96(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q6kScale<>+104(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q6kScale<>+112(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q6kScale<>+120(SB)/8, $0x0F0E0F0E0F0E0F0E
GLOBL q6kScale<>(SB), RODATA|NOPTR, $128

// Q6K_QUANT finishes one 32-weight run: Y5 holds the unsigned quants (0..63);
// adds Σ scale·q·q8 into Y1 (the -32 offset is taken off once per block,
// from the bsums: Q6K_OFFSET). off8 is the q8 offset, mask the scale mask.
#define Q6K_QUANT(off8, mask) \
	VPMADDUBSW off8(DI), Y5, Y5; \
	VPSHUFB mask, Y6, Y9; \
	VPMADDWD Y9, Y5, Y5; \
	VPADDD Y5, Y1, Y1

// Q6K_HALF adds one 128-weight half of a block_q6_K (ql at offl(SI), qh at
// offh(SI), 8 scales at offs(SI), q8 from off8(DI)) into Y1.
#define Q6K_HALF(offl, offl2, offh, offs, o0, o1, o2, o3) \
	VPMOVSXBW offs(SI), X6; \
	VINSERTI128 $1, X6, Y6, Y6; \
	VMOVDQU offh(SI), Y2; \
	VMOVDQU offl(SI), Y3; \
	VMOVDQU offl2(SI), Y4; \
	VPAND Y15, Y3, Y5; \
	VPSLLW $4, Y2, Y9; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y5, Y5; \
	Q6K_QUANT(o0, q6kScale<>+0(SB)); \
	VPAND Y15, Y4, Y5; \
	VPSLLW $2, Y2, Y9; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y5, Y5; \
	Q6K_QUANT(o1, q6kScale<>+32(SB)); \
	VPSRLW $4, Y3, Y5; \
	VPAND Y15, Y5, Y5; \
	VPAND Y14, Y2, Y9; \
	VPOR Y9, Y5, Y5; \
	Q6K_QUANT(o2, q6kScale<>+64(SB)); \
	VPSRLW $4, Y4, Y5; \
	VPAND Y15, Y5, Y5; \
	VPSRLW $2, Y2, Y9; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y5, Y5; \
	Q6K_QUANT(o3, q6kScale<>+96(SB))

// Q6K_OFFSET subtracts 32·Σ scale[j]·bsums[j] (Y10 holds the 16 scales as
// int16) of the vector at addr from ACC.
#define Q6K_OFFSET(addr, ACC) \
	VPMADDWD addr, Y10, Y8; \
	VPSLLD $5, Y8, Y8; \
	VPSUBD Y8, ACC, ACC

// func dotQ6KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ6KAVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS X0, X0, X0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x30303030, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14

q6kloop:
	TESTQ CX, CX
	JZ q6kdone
	VPXOR Y1, Y1, Y1
	Q6K_HALF(0, 32, 128, 192, 4, 36, 68, 100)
	Q6K_HALF(64, 96, 160, 200, 132, 164, 196, 228)
	VPMOVSXBW 192(SI), Y10
	Q6K_OFFSET(260(DI), Y1)
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi

	MOVWLZX 208(SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9 // dw
	VMULSS (DI), X9, X9 // d = dw*da
	VCVTSI2SSL AX, X11, X11
	VMULSS X11, X9, X9
	VADDSS X9, X0, X0

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q6kloop

q6kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q5K_PAIR is Q4K_PAIR with the 5th bits: qh (32 bytes) is in Y6; SHLO/SHHI
// are the shift instructions that bring bit 2k / 2k+1 of each qh byte to bit
// 4 (Y13 holds 0x10 bytes).
#define Q5K_PAIR(off4, off8lo, off8hi, mlo, mhi, SHLO, nlo, SHHI, nhi) \
	VMOVDQU off4(SI), Y2; \
	VPSRLW $4, Y2, Y3; \
	VPAND Y15, Y2, Y2; \
	VPAND Y15, Y3, Y3; \
	SHLO $nlo, Y6, Y7; \
	VPAND Y13, Y7, Y7; \
	VPOR Y7, Y2, Y2; \
	SHHI $nhi, Y6, Y7; \
	VPAND Y13, Y7, Y7; \
	VPOR Y7, Y3, Y3; \
	VMOVDQU off8lo(DI), Y4; \
	VPMADDUBSW Y4, Y2, Y2; \
	VMOVDQU off8hi(DI), Y4; \
	VPMADDUBSW Y4, Y3, Y3; \
	VPSHUFB kScale<>+mlo(SB), Y14, Y5; \
	VPMADDWD Y5, Y2, Y2; \
	VPSHUFB kScale<>+mhi(SB), Y14, Y5; \
	VPMADDWD Y5, Y3, Y3; \
	VPADDD Y2, Y1, Y1; \
	VPADDD Y3, Y1, Y1

// func dotQ5KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ5KAVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS X0, X0, X0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x10101010, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13

q5kloop:
	TESTQ CX, CX
	JZ q5kdone

	MOVL 4(SI), R8
	MOVL 8(SI), R9
	MOVL 12(SI), R10
	MOVL R10, R11
	SHRL $4, R11
	ANDL $0x0F0F0F0F, R11
	MOVL R9, BX
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	ORL  BX, R11
	MOVL R9, R12
	ANDL $0x3F3F3F3F, R12
	MOVL R10, R9
	ANDL $0x0F0F0F0F, R9
	MOVL R8, BX
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	ORL  BX, R9
	MOVL R12, R10
	ANDL $0x3F3F3F3F, R8

	VMOVDQU 16(SI), Y6 // qh
	VPXOR Y1, Y1, Y1
	K_SCALES
	Q5K_PAIR(48, 4, 36, 0, 32, VPSLLW, 4, VPSLLW, 3)
	Q5K_PAIR(80, 68, 100, 64, 96, VPSLLW, 2, VPSLLW, 1)
	Q5K_PAIR(112, 132, 164, 128, 160, VPSRLW, 0, VPSRLW, 1)
	Q5K_PAIR(144, 196, 228, 192, 224, VPSRLW, 2, VPSRLW, 3)
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi

	VMOVDQU 260(DI), Y6
	VEXTRACTI128 $1, Y6, X7
	VPHADDW X7, X6, X6
	VMOVD R10, X7
	VPINSRD $1, R11, X7, X7
	VPMOVZXBW X7, X7
	VPMADDWD X7, X6, X6
	VPSHUFD $0x4E, X6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0xB1, X6, X7
	VPADDD X7, X6, X6
	VMOVD X6, DX // summ

	VMOVSS (DI), X8
	MOVWLZX 0(SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9
	MOVWLZX 2(SI), BX
	VMOVD BX, X10
	VCVTPH2PS X10, X10
	VMULSS X8, X9, X9
	VMULSS X8, X10, X10
	VCVTSI2SSL AX, X11, X11
	VMULSS X11, X9, X9
	VCVTSI2SSL DX, X12, X12
	VMULSS X12, X10, X10
	VADDSS X9, X0, X0
	VSUBSS X10, X0, X0

	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q5kloop

q5kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET


// Four-vector K-quant kernels: one weight row times four Q8_K activation
// vectors. Each weight block is decoded once and multiplied with the four
// vectors' blocks; vector c's activation is at a + c*stride. Per vector, the
// integer block sums are the row kernels' exactly, and the per-block float32
// steps run lane-wise (lane c = vector c) in the row kernels' operand order,
// so every result has the row kernel's bits (dot_k_amd64.s).
//
// Registers common to both: SI weights, DI vector 0, R13 stride, DX vector 3
// (DI + 3*stride), CX blocks left, Y0-Y3 the four vectors' int32 lane sums,
// X12 the four float32 row sums.

// DA4 gathers the four vectors' f32 block scales into X8.
#define DA4 \
	VMOVSS (DI), X8; \
	VINSERTPS $0x10, (DI)(R13*1), X8, X8; \
	VINSERTPS $0x20, (DI)(R13*2), X8, X8; \
	VINSERTPS $0x30, (DX), X8, X8

// F16_BCAST widens the f16 at off(SI) into all four lanes of X.
#define F16_BCAST(off, X) \
	MOVWLZX off(SI), BX; \
	VMOVD BX, X; \
	VCVTPH2PS X, X; \
	VBROADCASTSS X, X

// Q4K4_COL multiplies the unpacked runs (lo Y4, hi Y5, scale words Y6/Y7)
// with one vector's q8 at lo/hi and adds into ACC.
#define Q4K4_COL(lo, hi, ACC) \
	VPMADDUBSW lo, Y4, Y8; \
	VPMADDWD Y6, Y8, Y8; \
	VPMADDUBSW hi, Y5, Y9; \
	VPMADDWD Y7, Y9, Y9; \
	VPADDD Y8, ACC, ACC; \
	VPADDD Y9, ACC, ACC

// Q4K4_PAIR is Q4K_PAIR for four vectors.
#define Q4K4_PAIR(off4, off8lo, off8hi, mlo, mhi) \
	VMOVDQU off4(SI), Y4; \
	VPSRLW $4, Y4, Y5; \
	VPAND Y15, Y4, Y4; \
	VPAND Y15, Y5, Y5; \
	VPSHUFB kScale<>+mlo(SB), Y14, Y6; \
	VPSHUFB kScale<>+mhi(SB), Y14, Y7; \
	Q4K4_COL(off8lo(DI), off8hi(DI), Y0); \
	Q4K4_COL(off8lo(DI)(R13*1), off8hi(DI)(R13*1), Y1); \
	Q4K4_COL(off8lo(DI)(R13*2), off8hi(DI)(R13*2), Y2); \
	Q4K4_COL(off8lo(DX), off8hi(DX), Y3)

// Q4K4_SUMM sets the four int32 lanes of X to the pairwise products of one
// vector's bsums (at addr) with the mins in X13.
#define Q4K4_SUMM(addr, X) \
	VMOVDQU addr, Y8; \
	VEXTRACTI128 $1, Y8, X9; \
	VPHADDW X9, X8, X8; \
	VPMADDWD X13, X8, X

// func dotQ4KAVX2x4(dst *float32, w, a *byte, stride, nb int)
TEXT ·dotQ4KAVX2x4(SB), NOSPLIT, $0-40
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	VXORPS X12, X12, X12
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

q4k4loop:
	TESTQ CX, CX
	JZ q4k4done
	ACT_PTRS

	// Scales and mins as in dotQ4KAVX2.
	MOVL 4(SI), R8
	MOVL 8(SI), R9
	MOVL 12(SI), R10
	MOVL R10, R11
	SHRL $4, R11
	ANDL $0x0F0F0F0F, R11
	MOVL R9, BX
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	ORL  BX, R11
	MOVL R9, R12
	ANDL $0x3F3F3F3F, R12
	MOVL R10, R9
	ANDL $0x0F0F0F0F, R9
	MOVL R8, BX
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	ORL  BX, R9
	MOVL R12, R10
	ANDL $0x3F3F3F3F, R8

	K_SCALES
	VMOVD R10, X13
	VPINSRD $1, R11, X13, X13
	VPMOVZXBW X13, X13 // mins as int16

	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	Q4K4_PAIR(16, 4, 36, 0, 32)
	Q4K4_PAIR(48, 68, 100, 64, 96)
	Q4K4_PAIR(80, 132, 164, 128, 160)
	Q4K4_PAIR(112, 196, 228, 192, 224)
	REDUCE4 // X0 = sumi

	Q4K4_SUMM(260(DI), X1)
	Q4K4_SUMM(260(DI)(R13*1), X2)
	Q4K4_SUMM(260(DI)(R13*2), X3)
	Q4K4_SUMM(260(DX), X11)
	VPHADDD X2, X1, X1
	VPHADDD X11, X3, X3
	VPHADDD X3, X1, X1 // X1 = summ

	DA4
	F16_BCAST(0, X9)  // dw
	F16_BCAST(2, X10) // dminw
	VMULPS X8, X9, X9   // d = dw*da
	VMULPS X8, X10, X10 // dmin = dminw*da
	VCVTDQ2PS X0, X0
	VMULPS X0, X9, X9 // d*sumi
	VCVTDQ2PS X1, X1
	VMULPS X1, X10, X10 // dmin*summ
	VADDPS X9, X12, X12
	VSUBPS X10, X12, X12

	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q4k4loop

q4k4done:
	MOVQ dst+0(FP), AX
	VMOVUPS X12, (AX)
	VZEROUPPER
	RET

// Q6K4_RUN multiplies one run of 32 unsigned quants (Y5, 0..63) with the
// four vectors' q8 at off8 and adds scale·Σq·q8 into Y0..Y3 (the -32 offset
// is applied once per block from the bsums).
#define Q6K4_RUN(off8, mask) \
	VPSHUFB mask, Y6, Y7; \
	VPMADDUBSW off8(DI), Y5, Y8; \
	VPMADDWD Y7, Y8, Y8; \
	VPADDD Y8, Y0, Y0; \
	VPMADDUBSW off8(DI)(R13*1), Y5, Y8; \
	VPMADDWD Y7, Y8, Y8; \
	VPADDD Y8, Y1, Y1; \
	VPMADDUBSW off8(DI)(R13*2), Y5, Y8; \
	VPMADDWD Y7, Y8, Y8; \
	VPADDD Y8, Y2, Y2; \
	VPMADDUBSW off8(DX), Y5, Y8; \
	VPMADDWD Y7, Y8, Y8; \
	VPADDD Y8, Y3, Y3

// Q6K4_HALF is Q6K_HALF for four vectors (qh in Y10, ql in Y11/Y13).
#define Q6K4_HALF(offl, offl2, offh, offs, o0, o1, o2, o3) \
	VPMOVSXBW offs(SI), X6; \
	VINSERTI128 $1, X6, Y6, Y6; \
	VMOVDQU offh(SI), Y10; \
	VMOVDQU offl(SI), Y11; \
	VMOVDQU offl2(SI), Y13; \
	VPAND Y15, Y11, Y5; \
	VPSLLW $4, Y10, Y9; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y5, Y5; \
	Q6K4_RUN(o0, q6kScale<>+0(SB)); \
	VPAND Y15, Y13, Y5; \
	VPSLLW $2, Y10, Y9; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y5, Y5; \
	Q6K4_RUN(o1, q6kScale<>+32(SB)); \
	VPSRLW $4, Y11, Y5; \
	VPAND Y15, Y5, Y5; \
	VPAND Y14, Y10, Y9; \
	VPOR Y9, Y5, Y5; \
	Q6K4_RUN(o2, q6kScale<>+64(SB)); \
	VPSRLW $4, Y13, Y5; \
	VPAND Y15, Y5, Y5; \
	VPSRLW $2, Y10, Y9; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y5, Y5; \
	Q6K4_RUN(o3, q6kScale<>+96(SB))

// func dotQ6KAVX2x4(dst *float32, w, a *byte, stride, nb int)
TEXT ·dotQ6KAVX2x4(SB), NOSPLIT, $0-40
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	VXORPS X12, X12, X12
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x30303030, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14

q6k4loop:
	TESTQ CX, CX
	JZ q6k4done
	ACT_PTRS
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	Q6K4_HALF(0, 32, 128, 192, 4, 36, 68, 100)
	Q6K4_HALF(64, 96, 160, 200, 132, 164, 196, 228)
	VPMOVSXBW 192(SI), Y10
	Q6K_OFFSET(260(DI), Y0)
	Q6K_OFFSET(260(DI)(R13*1), Y1)
	Q6K_OFFSET(260(DI)(R13*2), Y2)
	Q6K_OFFSET(260(DX), Y3)
	REDUCE4 // X0 = sumi

	DA4
	F16_BCAST(208, X9) // dw
	VMULPS X8, X9, X9  // d = dw*da
	VCVTDQ2PS X0, X0
	VMULPS X0, X9, X9
	VADDPS X9, X12, X12

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q6k4loop

q6k4done:
	MOVQ dst+0(FP), AX
	VMOVUPS X12, (AX)
	VZEROUPPER
	RET
