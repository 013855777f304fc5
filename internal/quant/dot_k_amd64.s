//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// K-quant row kernels: Q4_K, Q5_K, Q6_K times Q8_K, in ggml's orders (see
// order.go and dot_ref_k.go). Each block leaves eight int32 lanes in Y1
// (lane j: bytes 4j..4j+3 of every 32-byte run of quants times the run's
// scale, as ggml's AVX2 kernels). amx == 0: ggml's plain order, the lanes
// go into the float32 lanes of Y0 with one FMA each and end in HSUM8, the
// mins into their own accumulator. amx == 1: ggml's AMX order, the lanes
// are summed to one exact int and added to X0 with scalar FMAs. amx == 2:
// ggml's CPU_REPACK order, as 1 with the mins' FMAs into X13, subtracted
// from X0 at the end.

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
TEXT ·dotQ4KAVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS X13, X13, X13
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

q4kloop:
	TESTQ CX, CX
	JZ q4kdone
	PREFETCH_Q4K(SI)

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
	// X6 = the four min products min[2k]*s[2k] + min[2k+1]*s[2k+1], s the
	// 32-weight sums of the bsums
	VMOVDQU 260(DI), Y6
	VEXTRACTI128 $1, Y6, X7
	VPHADDW X7, X6, X6
	VMOVD R10, X7
	VPINSRD $1, R11, X7, X7
	VPMOVZXBW X7, X7
	VPMADDWD X7, X6, X6

	VMOVSS (DI), X8 // da
	MOVWLZX 0(SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9 // dw
	MOVWLZX 2(SI), BX
	VMOVD BX, X10
	VCVTPH2PS X10, X10 // dminw
	VMULSS X8, X9, X9   // d = dw*da
	VMULSS X8, X10, X10 // dmin = dminw*da
	CMPQ amx+24(FP), $0
	JNE  q4kamx
	VBROADCASTSS X9, Y9
	VCVTDQ2PS Y1, Y1
	VFMADD231PS Y9, Y1, Y0 // lanes += d*lane
	VBROADCASTSS X10, X10
	VCVTDQ2PS X6, X6
	VFNMADD231PS X10, X6, X13 // mins -= dmin*prod
	JMP  q4knext

q4kamx: // ggml's AMX order: two fused steps
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi
	VPSHUFD $0x4E, X6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0xB1, X6, X7
	VPADDD X7, X6, X6
	VMOVD X6, DX // summ
	VCVTSI2SSL AX, X11, X11
	VCVTSI2SSL DX, X12, X12
	VFMADD231SS X11, X9, X0 // acc += d*sumi
	CMPQ amx+24(FP), $2
	JEQ  q4krepack
	VFNMADD231SS X12, X10, X0 // acc -= dmin*summ
	JMP  q4knext

q4krepack: // ggml's CPU_REPACK order: the mins in X13 of their own
	VFMADD231SS X12, X10, X13 // accm += dmin*summ

q4knext:

	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q4kloop

q4kdone:
	CMPQ amx+24(FP), $2
	JNE  q4kdone1
	VSUBSS X13, X0, X0 // acc - accm
	JMP  q4kret

q4kdone1:
	CMPQ amx+24(FP), $0
	JNE  q4kret
	VMOVHLPS X13, X13, X1 // mins: (m0+m2) + (m1+m3)
	VADDPS X1, X13, X13
	VMOVSHDUP X13, X1
	VADDSS X1, X13, X13
	HSUM8
	VADDSS X13, X0, X0

q4kret:
	VZEROUPPER
	MOVSS X0, ret+32(FP)
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
// adds Σ scale·q·q8 into the lanes of Y1 (the -32 comes from the bsums). off8 is the q8 offset, mask the scale mask.
#define Q6K_QUANT(off8, mask) \
	VMOVDQU off8(DI), Y7; \
	VPMADDUBSW Y7, Y5, Y5; \
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

// func dotQ6KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ6KAVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x30303030, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14

q6kloop:
	TESTQ CX, CX
	JZ q6kdone
	PREFETCH_Q6K(SI)
	VPXOR Y1, Y1, Y1
	Q6K_HALF(0, 32, 128, 192, 4, 36, 68, 100)
	Q6K_HALF(64, 96, 160, 200, 132, 164, 196, 228)
	// lane j -= 32*(bsums[2j]*scale[2j] + bsums[2j+1]*scale[2j+1])
	VPMOVSXBW 192(SI), Y6
	VMOVDQU 260(DI), Y7
	VPMADDWD Y7, Y6, Y6
	VPSLLD $5, Y6, Y6
	VPSUBD Y6, Y1, Y1

	MOVWLZX 208(SI), BX
	VMOVD BX, X9
	VCVTPH2PS X9, X9 // dw
	VMULSS (DI), X9, X9 // d = dw*da
	CMPQ amx+24(FP), $0
	JNE  q6kamx
	VBROADCASTSS X9, Y9
	VCVTDQ2PS Y1, Y1
	VFMADD231PS Y9, Y1, Y0 // lanes += d*lane
	JMP  q6knext

q6kamx: // ggml's AMX order: one fused step
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi
	VCVTSI2SSL AX, X11, X11
	VFMADD231SS X11, X9, X0

q6knext:

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q6kloop

q6kdone:
	CMPQ amx+24(FP), $0
	JNE  q6kret
	HSUM8

q6kret:
	VZEROUPPER
	MOVSS X0, ret+32(FP)
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
TEXT ·dotQ5KAVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS X12, X12, X12
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x10101010, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13

q5kloop:
	TESTQ CX, CX
	JZ q5kdone
	PREFETCH_Q4K(SI) // a 176-byte Q5_K block spans three lines too

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

	// summ = Σ min[m]*s[m], s the 32-weight sums of the bsums
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
	VMULSS X8, X9, X9   // d = dw*da
	VMULSS X8, X10, X10 // dmin = dminw*da
	CMPQ amx+24(FP), $0
	JNE  q5kamx
	VBROADCASTSS X9, Y9
	VCVTDQ2PS Y1, Y1
	VFMADD231PS Y9, Y1, Y0 // lanes += d*lane
	VCVTSI2SSL DX, X11, X11
	VFNMADD231SS X11, X10, X12 // summs -= dmin*summ
	JMP  q5knext

q5kamx: // ggml's AMX order: two fused steps
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi
	VCVTSI2SSL AX, X11, X11
	VCVTSI2SSL DX, X12, X12
	VFMADD231SS X11, X9, X0   // acc += d*sumi
	VFNMADD231SS X12, X10, X0 // acc -= dmin*summ

q5knext:

	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q5kloop

q5kdone:
	CMPQ amx+24(FP), $0
	JNE  q5kret
	HSUM8
	VADDSS X12, X0, X0

q5kret:
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// Four-vector Q4_K and Q6_K kernels: one weight row times four Q8_K
// activation vectors (vector c at a + c*stride), in the row kernels' orders.
// Each weight block is decoded once for the four vectors; vector c's int32
// lanes (Y0..Y3) are the row kernel's lanes exactly (the same products in the
// same lanes). amx == 0: each vector's lanes (and Q4_K mins) take the row
// kernel's float32 steps into acc (vector c: lanes at acc[16c:16c+8], mins
// at acc[16c+8:16c+12]), which dotFour reduces as the row kernel does.
// amx == 1: each vector's lanes are summed to one int, and the four AMX-order
// accumulators run side by side in X12 (lane c = vector c), one FMA step
// per block as the row kernel's scalar ones, stored to acc[0:4]. amx == 2
// (Q4_K only): the CPU_REPACK order, as 1 with the four mins' accumulators
// in the frame's first 16 bytes, subtracted from X12 at the end.
//
// Registers: SI weights, DI vector 0, R13 stride, DX vector 3, CX blocks
// left, AX acc, X4 dw (and X5 dminw) of the block.

// Q4K4_COL multiplies the unpacked runs (lo Y4, hi Y5, scale words Y6/Y7)
// with one vector's q8 at lo/hi and adds into ACC.
#define Q4K4_COL(lo, hi, ACC) \
	VPMADDUBSW lo, Y4, Y8; \
	VPMADDWD Y6, Y8, Y8; \
	VPMADDUBSW hi, Y5, Y9; \
	VPMADDWD Y7, Y9, Y9; \
	VPADDD Y8, ACC, ACC; \
	VPADDD Y9, ACC, ACC

// ZERO_ACC64 zeroes the 64 float32 accumulators at (AX).
#define ZERO_ACC64 \
	VXORPS Y0, Y0, Y0; \
	VMOVUPS Y0, 0(AX); \
	VMOVUPS Y0, 32(AX); \
	VMOVUPS Y0, 64(AX); \
	VMOVUPS Y0, 96(AX); \
	VMOVUPS Y0, 128(AX); \
	VMOVUPS Y0, 160(AX); \
	VMOVUPS Y0, 192(AX); \
	VMOVUPS Y0, 224(AX)

// HSUM8_AT stores hsum8 of the accumulators at acc(AX) to outoff(BX)
// (HSUM8: the row kernels' end, order.go's hsum8).
#define HSUM8_AT(acc, outoff) \
	VMOVUPS acc(AX), Y0; \
	HSUM8; \
	VMOVSS X0, outoff(BX)

// HSUM8_MINS stores hsum8 of the accumulators at acc(AX) plus
// (m0+m2)+(m1+m3) of the four mins lanes at acc+32(AX) to outoff(BX): the
// Q4_K row kernel's end.
#define HSUM8_MINS(acc, outoff) \
	VMOVUPS acc(AX), Y0; \
	HSUM8; \
	VMOVUPS acc+32(AX), X2; \
	VMOVHLPS X2, X2, X3; \
	VADDPS X3, X2, X2; \
	VMOVSHDUP X2, X3; \
	VADDSS X3, X2, X2; \
	VADDSS X2, X0, X0; \
	VMOVSS X0, outoff(BX)

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

// Q4K4_MINS sets the four int32 lanes of X to min[2k]*s[2k] +
// min[2k+1]*s[2k+1] of one vector (bsums at bs; mins as int16 in X13).
#define Q4K4_MINS(bs, X) \
	VMOVDQU bs, Y8; \
	VEXTRACTI128 $1, Y8, X9; \
	VPHADDW X9, X8, X8; \
	VPMADDWD X13, X8, X

// Q4K4_PLAIN is the row kernel's plain-order float32 step for one vector
// (d at da, bsums at bs, int32 lanes in Y; its acc entries at off(AX)).
#define Q4K4_PLAIN(da, bs, Y, off) \
	VMOVSS da, X6; \
	VMULSS X6, X4, X7; \
	VMULSS X6, X5, X6; \
	VBROADCASTSS X7, Y7; \
	VCVTDQ2PS Y, Y; \
	VMOVUPS off(AX), Y8; \
	VFMADD231PS Y7, Y, Y8; \
	VMOVUPS Y8, off(AX); \
	Q4K4_MINS(bs, X8); \
	VCVTDQ2PS X8, X8; \
	VBROADCASTSS X6, X6; \
	VMOVUPS off+32(AX), X9; \
	VFNMADD231PS X6, X8, X9; \
	VMOVUPS X9, off+32(AX)

// func dotQ4KAVX2x4(out *[4]float32, w, a *byte, stride, nb, amx int)
//
// The plain order's per-vector float32 accumulators (8 lanes, then the 4
// mins lanes) live in the 256-byte frame; the end reduces each as the row
// kernel's Go caller does (hsum8, then (m0+m2)+(m1+m3)) and writes out.
TEXT ·dotQ4KAVX2x4(SB), NOSPLIT, $256-48
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	VXORPS X12, X12, X12
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	LEAQ 0(SP), AX
	ZERO_ACC64

q4k4loop:
	TESTQ CX, CX
	JZ q4k4done
	PREFETCH_Q4K(SI) // decode of a few sequences streams the row as the row kernel does
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

	MOVWLZX 0(SI), BX
	VMOVD BX, X4
	VCVTPH2PS X4, X4 // dw
	MOVWLZX 2(SI), BX
	VMOVD BX, X5
	VCVTPH2PS X5, X5 // dminw
	CMPQ amx+40(FP), $0
	JNE  q4k4amx
	Q4K4_PLAIN((DI), 260(DI), Y0, 0)
	Q4K4_PLAIN((DI)(R13*1), 260(DI)(R13*1), Y1, 64)
	Q4K4_PLAIN((DI)(R13*2), 260(DI)(R13*2), Y2, 128)
	Q4K4_PLAIN((DX), 260(DX), Y3, 192)
	JMP  q4k4next

q4k4amx: // ggml's AMX order, lane c = vector c
	REDUCE4 // X0 = sumi
	Q4K4_MINS(260(DI), X1)
	Q4K4_MINS(260(DI)(R13*1), X2)
	Q4K4_MINS(260(DI)(R13*2), X3)
	Q4K4_MINS(260(DX), X11)
	VPHADDD X2, X1, X1
	VPHADDD X11, X3, X3
	VPHADDD X3, X1, X1 // X1 = summ
	DA4
	VBROADCASTSS X4, X9
	VBROADCASTSS X5, X10
	VMULPS X8, X9, X9   // d = dw*da
	VMULPS X8, X10, X10 // dmin = dminw*da
	VCVTDQ2PS X0, X0
	VCVTDQ2PS X1, X1
	VFMADD231PS X9, X0, X12 // acc += d*sumi
	CMPQ amx+40(FP), $2
	JEQ  q4k4repack
	VFNMADD231PS X10, X1, X12 // acc -= dmin*summ
	JMP  q4k4next

q4k4repack: // ggml's CPU_REPACK order: the mins' accumulators in the frame
	VMOVUPS 0(AX), X11
	VFMADD231PS X10, X1, X11 // accm += dmin*summ
	VMOVUPS X11, 0(AX)

q4k4next:
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q4k4loop

q4k4done:
	MOVQ out+0(FP), BX
	CMPQ amx+40(FP), $0
	JE   q4k4plain
	CMPQ amx+40(FP), $2
	JNE  q4k4store
	VMOVUPS 0(AX), X11
	VSUBPS X11, X12, X12 // acc - accm

q4k4store:
	VMOVUPS X12, (BX)
	VZEROUPPER
	RET

q4k4plain:
	HSUM8_MINS(0, 0)
	HSUM8_MINS(64, 4)
	HSUM8_MINS(128, 8)
	HSUM8_MINS(192, 12)
	VZEROUPPER
	RET

// Q6K4_RUN multiplies one run of 32 unsigned quants (Y5, 0..63) with the
// four vectors' q8 at off8 and adds scale·Σq·q8 into Y0..Y3.
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

// Q6K4_OFFSET subtracts 32·(bsums[2j]·scale[2j] + bsums[2j+1]·scale[2j+1])
// of the vector whose bsums are at bs from lane j of ACC (Y10 holds the 16
// scales as int16), as the row kernel does.
#define Q6K4_OFFSET(bs, ACC) \
	VPMADDWD bs, Y10, Y8; \
	VPSLLD $5, Y8, Y8; \
	VPSUBD Y8, ACC, ACC

// Q6K4_PLAIN is the row kernel's plain-order float32 step for one vector
// (d at da, int32 lanes in Y; its acc entries at off(AX)).
#define Q6K4_PLAIN(da, Y, off) \
	VMOVSS da, X6; \
	VMULSS X6, X4, X7; \
	VBROADCASTSS X7, Y7; \
	VCVTDQ2PS Y, Y; \
	VMOVUPS off(AX), Y8; \
	VFMADD231PS Y7, Y, Y8; \
	VMOVUPS Y8, off(AX)

// func dotQ6KAVX2x4(out *[4]float32, w, a *byte, stride, nb, amx int)
//
// As dotQ4KAVX2x4: plain-order accumulators in the frame, reduced by hsum8
// at the end.
TEXT ·dotQ6KAVX2x4(SB), NOSPLIT, $256-48
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
	LEAQ 0(SP), AX
	ZERO_ACC64

q6k4loop:
	TESTQ CX, CX
	JZ q6k4done
	PREFETCH_Q6K(SI)
	ACT_PTRS
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	Q6K4_HALF(0, 32, 128, 192, 4, 36, 68, 100)
	Q6K4_HALF(64, 96, 160, 200, 132, 164, 196, 228)
	VPMOVSXBW 192(SI), Y10
	Q6K4_OFFSET(260(DI), Y0)
	Q6K4_OFFSET(260(DI)(R13*1), Y1)
	Q6K4_OFFSET(260(DI)(R13*2), Y2)
	Q6K4_OFFSET(260(DX), Y3)

	MOVWLZX 208(SI), BX
	VMOVD BX, X4
	VCVTPH2PS X4, X4 // dw
	CMPQ amx+40(FP), $0
	JNE  q6k4amx
	Q6K4_PLAIN((DI), Y0, 0)
	Q6K4_PLAIN((DI)(R13*1), Y1, 64)
	Q6K4_PLAIN((DI)(R13*2), Y2, 128)
	Q6K4_PLAIN((DX), Y3, 192)
	JMP  q6k4next

q6k4amx: // ggml's AMX order, lane c = vector c
	REDUCE4 // X0 = sumi
	DA4
	VBROADCASTSS X4, X9
	VMULPS X8, X9, X9 // d = dw*da
	VCVTDQ2PS X0, X0
	VFMADD231PS X9, X0, X12 // acc += d*sumi

q6k4next:
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q6k4loop

q6k4done:
	MOVQ out+0(FP), BX
	CMPQ amx+40(FP), $0
	JE   q6k4plain
	VMOVUPS X12, (BX)
	VZEROUPPER
	RET

q6k4plain:
	HSUM8_AT(0, 0)
	HSUM8_MINS(64, 4)
	HSUM8_AT(128, 8)
	HSUM8_AT(192, 12)
	VZEROUPPER
	RET
