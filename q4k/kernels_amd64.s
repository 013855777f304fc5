//go:build amd64 && !purego

#include "textflag.h"

// Every kernel here reproduces its reference loop in dot_ref.go / quant.go
// bit for bit: integer block sums are exact (two's-complement sums do not
// depend on order), and the per-block float32 steps are the same scalar
// operations in the same order (VMULSS/VADDSS/VSUBSS round like Go's float32
// arithmetic; nothing is fused). f16 fields are widened with VCVTPH2PS,
// which is exact.

// HSUM_D sums the 8 int32 lanes of Y into the low dword of X (T scratch).
#define HSUM_D(Y, X, T) \
	VEXTRACTI128 $1, Y, T; \
	VPADDD T, X, X; \
	VPSHUFD $0x4E, X, T; \
	VPADDD T, X, X; \
	VPSHUFD $0xB1, X, T; \
	VPADDD T, X, X

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
// adds Σ scale·(q-32)·q8 into Y1. off8 is the q8 offset, mask the scale mask.
#define Q6K_QUANT(off8, mask) \
	VMOVDQU off8(DI), Y7; \
	VPMADDUBSW Y7, Y5, Y5; \
	VPMADDUBSW Y7, Y12, Y8; \
	VPSUBW Y8, Y5, Y5; \
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
	MOVL $0x20202020, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12

q6kloop:
	TESTQ CX, CX
	JZ q6kdone
	VPXOR Y1, Y1, Y1
	Q6K_HALF(0, 32, 128, 192, 4, 36, 68, 100)
	Q6K_HALF(64, 96, 160, 200, 132, 164, 196, 228)
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

// func dotQ80AVX2(w, a *byte, nb int) float32
TEXT ·dotQ80AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS X0, X0, X0

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

// The float dot products keep 32 float32 lanes in Y0..Y3 (lane l holds the
// elements i with i%32 == l, added in index order: each product rounded,
// then added — VMULPS then VADDPS, never an FMA) and store them to acc; the
// Go side adds the tail and reduces the lanes (see reduceLanes).

#define LANES_STEP(Y, W, A) \
	VMULPS A, W, W; \
	VADDPS W, Y, Y

#define LANES_STORE \
	VMOVUPS Y0, 0(BX); \
	VMOVUPS Y1, 32(BX); \
	VMOVUPS Y2, 64(BX); \
	VMOVUPS Y3, 96(BX); \
	VZEROUPPER

// func dotF32AVX2(w, a *byte, n int, acc *[lanes]float32)
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f32loop:
	CMPQ CX, $32
	JLT  f32done
	VMOVUPS 0(SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VMOVUPS 0(DI), Y8
	VMOVUPS 32(DI), Y9
	VMOVUPS 64(DI), Y10
	VMOVUPS 96(DI), Y11
	LANES_STEP(Y0, Y4, Y8)
	LANES_STEP(Y1, Y5, Y9)
	LANES_STEP(Y2, Y6, Y10)
	LANES_STEP(Y3, Y7, Y11)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  f32loop

f32done:
	MOVQ acc+24(FP), BX
	LANES_STORE
	RET

// func dotF16AVX2(w, a *byte, n int, acc *[lanes]float32)
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f16loop:
	CMPQ CX, $32
	JLT  f16done
	VCVTPH2PS 0(SI), Y4
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 48(SI), Y7
	VCVTPH2PS 0(DI), Y8
	VCVTPH2PS 16(DI), Y9
	VCVTPH2PS 32(DI), Y10
	VCVTPH2PS 48(DI), Y11
	LANES_STEP(Y0, Y4, Y8)
	LANES_STEP(Y1, Y5, Y9)
	LANES_STEP(Y2, Y6, Y10)
	LANES_STEP(Y3, Y7, Y11)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP  f16loop

f16done:
	MOVQ acc+24(FP), BX
	LANES_STORE
	RET

#define BF16_LOAD(off, R, Y) \
	VPMOVZXWD off(R), Y; \
	VPSLLD $16, Y, Y

// func dotBF16AVX2(w, a *byte, n int, acc *[lanes]float32)
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

bf16loop:
	CMPQ CX, $32
	JLT  bf16done
	BF16_LOAD(0, SI, Y4)
	BF16_LOAD(16, SI, Y5)
	BF16_LOAD(32, SI, Y6)
	BF16_LOAD(48, SI, Y7)
	BF16_LOAD(0, DI, Y8)
	BF16_LOAD(16, DI, Y9)
	BF16_LOAD(32, DI, Y10)
	BF16_LOAD(48, DI, Y11)
	LANES_STEP(Y0, Y4, Y8)
	LANES_STEP(Y1, Y5, Y9)
	LANES_STEP(Y2, Y6, Y10)
	LANES_STEP(Y3, Y7, Y11)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP  bf16loop

bf16done:
	MOVQ acc+24(FP), BX
	LANES_STORE
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
