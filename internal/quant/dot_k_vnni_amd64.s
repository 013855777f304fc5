//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// Eight-vector Q4_K and Q6_K kernels in ggml's plain order for CPUs with
// AVX-512 BW and VNNI: one weight row times eight Q8_K activation vectors
// (vector c at a + c*stride), in the row kernels' order (dot_k_amd64.s,
// dot_ref_k.go). The AMX order has kernels of its own
// (dot_k_vnni_amx_amd64.s).
//
// Only the exact integer part changes from the AVX2 kernels: each weight
// block is decoded once into 512-bit registers holding two 32-weight runs,
// and each vector's products go through VPMADDUBSW (u8·s8 pairs to int16,
// no saturation: quants are at most 63) and VPDPWSSD (int16 pairs times the
// run's scale, added to int32). Vector c's int32 accumulator Zc holds, in
// dword j of its low half, the first run's bytes 4j..4j+3 and in dword 8+j
// the second run's; adding the halves gives exactly the row kernel's lane j
// (two's-complement sums do not depend on order). The float32 steps are the
// row kernel's, one element per lane and vector, in the same order: vector
// c's eight lanes take fma(dw*da_c, float32(lane), acc) in acc[8c:8c+8];
// Q4_K's four min lanes take fnmadd(dminw*da_c, float32(min product), m)
// in acc[64+8p:64+8p+8] for the vector pair p = c/2, laid out as (c0k0,
// c0k1, c1k0, c1k1, c0k2, c0k3, c1k2, c1k3) with c0 = 2p, c1 = 2p+1.
// dotEight reduces them as the row kernel does.
//
// Registers: SI weights, DI vector 0, R13 stride, DX vector 3, R14 vector 6,
// CX blocks left, AX acc. Vector c's block is at (DI), (DI)(R13*1),
// (DI)(R13*2), (DX), (DI)(R13*4), (DX)(R13*2), (R14), (DX)(R13*4).
// Z0..Z7 the vectors' int32 lanes, Z8..Z11 the float lanes (vector pair p
// in Z8+p), Y12..Y15 Q4_K's min lanes, Y26 d = dw*da per vector, Y27
// dmin = dminw*da per vector.

// q4kScaleZ<> holds four VPSHUFB masks over the eight Q4_K scales (int16,
// repeated in every 128-bit lane); mask k (at 64k) spreads scale 2k over
// the low 256 bits and scale 2k+1 over the high 256 bits.
DATA q4kScaleZ<>+0(SB)/8, $0x0100010001000100
DATA q4kScaleZ<>+8(SB)/8, $0x0100010001000100
DATA q4kScaleZ<>+16(SB)/8, $0x0100010001000100
DATA q4kScaleZ<>+24(SB)/8, $0x0100010001000100
DATA q4kScaleZ<>+32(SB)/8, $0x0302030203020302
DATA q4kScaleZ<>+40(SB)/8, $0x0302030203020302
DATA q4kScaleZ<>+48(SB)/8, $0x0302030203020302
DATA q4kScaleZ<>+56(SB)/8, $0x0302030203020302
DATA q4kScaleZ<>+64(SB)/8, $0x0504050405040504
DATA q4kScaleZ<>+72(SB)/8, $0x0504050405040504
DATA q4kScaleZ<>+80(SB)/8, $0x0504050405040504
DATA q4kScaleZ<>+88(SB)/8, $0x0504050405040504
DATA q4kScaleZ<>+96(SB)/8, $0x0706070607060706
DATA q4kScaleZ<>+104(SB)/8, $0x0706070607060706
DATA q4kScaleZ<>+112(SB)/8, $0x0706070607060706
DATA q4kScaleZ<>+120(SB)/8, $0x0706070607060706
DATA q4kScaleZ<>+128(SB)/8, $0x0908090809080908
DATA q4kScaleZ<>+136(SB)/8, $0x0908090809080908
DATA q4kScaleZ<>+144(SB)/8, $0x0908090809080908
DATA q4kScaleZ<>+152(SB)/8, $0x0908090809080908
DATA q4kScaleZ<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kScaleZ<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kScaleZ<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kScaleZ<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kScaleZ<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kScaleZ<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kScaleZ<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kScaleZ<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kScaleZ<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kScaleZ<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kScaleZ<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kScaleZ<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q4kScaleZ<>(SB), RODATA|NOPTR, $256

// q6kScaleZ<> holds two VPSHUFB masks over eight Q6_K scales (int16,
// repeated in every 128-bit lane); mask h (at 64h) spreads scale 4h+i over
// 128-bit lane i (sixteen weights share a Q6_K scale).
DATA q6kScaleZ<>+0(SB)/8, $0x0100010001000100
DATA q6kScaleZ<>+8(SB)/8, $0x0100010001000100
DATA q6kScaleZ<>+16(SB)/8, $0x0302030203020302
DATA q6kScaleZ<>+24(SB)/8, $0x0302030203020302
DATA q6kScaleZ<>+32(SB)/8, $0x0504050405040504
DATA q6kScaleZ<>+40(SB)/8, $0x0504050405040504
DATA q6kScaleZ<>+48(SB)/8, $0x0706070607060706
DATA q6kScaleZ<>+56(SB)/8, $0x0706070607060706
DATA q6kScaleZ<>+64(SB)/8, $0x0908090809080908
DATA q6kScaleZ<>+72(SB)/8, $0x0908090809080908
DATA q6kScaleZ<>+80(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q6kScaleZ<>+88(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q6kScaleZ<>+96(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q6kScaleZ<>+104(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q6kScaleZ<>+112(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q6kScaleZ<>+120(SB)/8, $0x0F0E0F0E0F0E0F0E
GLOBL q6kScaleZ<>(SB), RODATA|NOPTR, $128

// shiftZ<> holds VPSRLVW/VPSLLVW counts: at 0, 0 for the low 16 words and 4
// for the high ones; at 64, 4 and 2; at 128, 0 and 2.
DATA shiftZ<>+0(SB)/8, $0
DATA shiftZ<>+8(SB)/8, $0
DATA shiftZ<>+16(SB)/8, $0
DATA shiftZ<>+24(SB)/8, $0
DATA shiftZ<>+32(SB)/8, $0x0004000400040004
DATA shiftZ<>+40(SB)/8, $0x0004000400040004
DATA shiftZ<>+48(SB)/8, $0x0004000400040004
DATA shiftZ<>+56(SB)/8, $0x0004000400040004
DATA shiftZ<>+64(SB)/8, $0x0004000400040004
DATA shiftZ<>+72(SB)/8, $0x0004000400040004
DATA shiftZ<>+80(SB)/8, $0x0004000400040004
DATA shiftZ<>+88(SB)/8, $0x0004000400040004
DATA shiftZ<>+96(SB)/8, $0x0002000200020002
DATA shiftZ<>+104(SB)/8, $0x0002000200020002
DATA shiftZ<>+112(SB)/8, $0x0002000200020002
DATA shiftZ<>+120(SB)/8, $0x0002000200020002
DATA shiftZ<>+128(SB)/8, $0
DATA shiftZ<>+136(SB)/8, $0
DATA shiftZ<>+144(SB)/8, $0
DATA shiftZ<>+152(SB)/8, $0
DATA shiftZ<>+160(SB)/8, $0x0002000200020002
DATA shiftZ<>+168(SB)/8, $0x0002000200020002
DATA shiftZ<>+176(SB)/8, $0x0002000200020002
DATA shiftZ<>+184(SB)/8, $0x0002000200020002
GLOBL shiftZ<>(SB), RODATA|NOPTR, $192

// permD<> holds VPERMPS indices: at 64p (p = 0..3), 2p for the low eight
// floats and 2p+1 for the high eight (vector pair p's d); at 256+32p,
// (2p, 2p, 2p+1, 2p+1) twice (its Q4_K min lanes).
DATA permD<>+0(SB)/8, $0x0000000000000000
DATA permD<>+8(SB)/8, $0x0000000000000000
DATA permD<>+16(SB)/8, $0x0000000000000000
DATA permD<>+24(SB)/8, $0x0000000000000000
DATA permD<>+32(SB)/8, $0x0000000100000001
DATA permD<>+40(SB)/8, $0x0000000100000001
DATA permD<>+48(SB)/8, $0x0000000100000001
DATA permD<>+56(SB)/8, $0x0000000100000001
DATA permD<>+64(SB)/8, $0x0000000200000002
DATA permD<>+72(SB)/8, $0x0000000200000002
DATA permD<>+80(SB)/8, $0x0000000200000002
DATA permD<>+88(SB)/8, $0x0000000200000002
DATA permD<>+96(SB)/8, $0x0000000300000003
DATA permD<>+104(SB)/8, $0x0000000300000003
DATA permD<>+112(SB)/8, $0x0000000300000003
DATA permD<>+120(SB)/8, $0x0000000300000003
DATA permD<>+128(SB)/8, $0x0000000400000004
DATA permD<>+136(SB)/8, $0x0000000400000004
DATA permD<>+144(SB)/8, $0x0000000400000004
DATA permD<>+152(SB)/8, $0x0000000400000004
DATA permD<>+160(SB)/8, $0x0000000500000005
DATA permD<>+168(SB)/8, $0x0000000500000005
DATA permD<>+176(SB)/8, $0x0000000500000005
DATA permD<>+184(SB)/8, $0x0000000500000005
DATA permD<>+192(SB)/8, $0x0000000600000006
DATA permD<>+200(SB)/8, $0x0000000600000006
DATA permD<>+208(SB)/8, $0x0000000600000006
DATA permD<>+216(SB)/8, $0x0000000600000006
DATA permD<>+224(SB)/8, $0x0000000700000007
DATA permD<>+232(SB)/8, $0x0000000700000007
DATA permD<>+240(SB)/8, $0x0000000700000007
DATA permD<>+248(SB)/8, $0x0000000700000007
DATA permD<>+256(SB)/8, $0x0000000000000000
DATA permD<>+264(SB)/8, $0x0000000100000001
DATA permD<>+272(SB)/8, $0x0000000000000000
DATA permD<>+280(SB)/8, $0x0000000100000001
DATA permD<>+288(SB)/8, $0x0000000200000002
DATA permD<>+296(SB)/8, $0x0000000300000003
DATA permD<>+304(SB)/8, $0x0000000200000002
DATA permD<>+312(SB)/8, $0x0000000300000003
DATA permD<>+320(SB)/8, $0x0000000400000004
DATA permD<>+328(SB)/8, $0x0000000500000005
DATA permD<>+336(SB)/8, $0x0000000400000004
DATA permD<>+344(SB)/8, $0x0000000500000005
DATA permD<>+352(SB)/8, $0x0000000600000006
DATA permD<>+360(SB)/8, $0x0000000700000007
DATA permD<>+368(SB)/8, $0x0000000600000006
DATA permD<>+376(SB)/8, $0x0000000700000007
GLOBL permD<>(SB), RODATA|NOPTR, $384

// ACT8 sets DX to vector 3's block and R14 to vector 6's.
#define ACT8 \
	LEAQ (DI)(R13*2), DX; \
	ADDQ R13, DX; \
	LEAQ (DX)(R13*2), R14; \
	ADDQ R13, R14

// ZERO8 clears the eight vectors' int32 lanes.
#define ZERO8 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

// COL8 multiplies the 64 decoded quants in W (two runs) with each vector's
// 64 q8 at off and adds Σ scale·(pair of products) into Z0..Z7 (SC holds
// the scale of every int16 product).
#define COL8(off, W, SC) \
	VPMADDUBSW off(DI), W, Z21; \
	VPDPWSSD SC, Z21, Z0; \
	VPMADDUBSW off(DI)(R13*1), W, Z25; \
	VPDPWSSD SC, Z25, Z1; \
	VPMADDUBSW off(DI)(R13*2), W, Z21; \
	VPDPWSSD SC, Z21, Z2; \
	VPMADDUBSW off(DX), W, Z25; \
	VPDPWSSD SC, Z25, Z3; \
	VPMADDUBSW off(DI)(R13*4), W, Z21; \
	VPDPWSSD SC, Z21, Z4; \
	VPMADDUBSW off(DX)(R13*2), W, Z25; \
	VPDPWSSD SC, Z25, Z5; \
	VPMADDUBSW off(R14), W, Z21; \
	VPDPWSSD SC, Z21, Z6; \
	VPMADDUBSW off(DX)(R13*4), W, Z25; \
	VPDPWSSD SC, Z25, Z7

// FOLD8 adds the high 256 bits of each of Z0..Z7 to its low 256 bits: the
// row kernel's eight lanes per vector in Y0..Y7.
#define FOLD8 \
	VEXTRACTI64X4 $1, Z0, Y21; \
	VPADDD Y21, Y0, Y0; \
	VEXTRACTI64X4 $1, Z1, Y25; \
	VPADDD Y25, Y1, Y1; \
	VEXTRACTI64X4 $1, Z2, Y21; \
	VPADDD Y21, Y2, Y2; \
	VEXTRACTI64X4 $1, Z3, Y25; \
	VPADDD Y25, Y3, Y3; \
	VEXTRACTI64X4 $1, Z4, Y21; \
	VPADDD Y21, Y4, Y4; \
	VEXTRACTI64X4 $1, Z5, Y25; \
	VPADDD Y25, Y5, Y5; \
	VEXTRACTI64X4 $1, Z6, Y21; \
	VPADDD Y21, Y6, Y6; \
	VEXTRACTI64X4 $1, Z7, Y25; \
	VPADDD Y25, Y7, Y7

// DA8 sets Y28 to the eight vectors' Q8_K d (f32 at the block's start).
#define DA8 \
	VMOVSS (DI), X28; \
	VINSERTPS $0x10, (DI)(R13*1), X28, X28; \
	VINSERTPS $0x20, (DI)(R13*2), X28, X28; \
	VINSERTPS $0x30, (DX), X28, X28; \
	VMOVSS (DI)(R13*4), X29; \
	VINSERTPS $0x10, (DX)(R13*2), X29, X29; \
	VINSERTPS $0x20, (R14), X29, X29; \
	VINSERTPS $0x30, (DX)(R13*4), X29, X29; \
	VINSERTF32X4 $1, X29, Y28, Y28

// LANES2 is the plain-order float32 step of a vector pair (int32 lanes in
// YA/ZA and YB; its d indices at permD<>+off): fma(d, float32(lane), acc) for each lane into FACC.
#define LANES2(YA, ZA, YB, off, FACC) \
	VINSERTI64X4 $1, YB, ZA, ZA; \
	VCVTDQ2PS ZA, ZA; \
	VMOVDQU32 permD<>+off(SB), Z28; \
	VPERMPS Z26, Z28, Z29; \
	VFMADD231PS Z29, ZA, FACC

// LANES2R is LANES2 with the d indices in register ZP.
#define LANES2R(YA, ZA, YB, ZP, FACC) \
	VINSERTI64X4 $1, YB, ZA, ZA; \
	VCVTDQ2PS ZA, ZA; \
	VPERMPS Z26, ZP, Z29; \
	VFMADD231PS Z29, ZA, FACC

// LANES8 is LANES2 for the four vector pairs.
#define LANES8 \
	LANES2(Y0, Z0, Y1, 0, Z8); \
	LANES2(Y2, Z2, Y3, 64, Z9); \
	LANES2(Y4, Z4, Y5, 128, Z10); \
	LANES2(Y6, Z6, Y7, 192, Z11)

// Q4K8_RUN decodes run k of a block_q4_K (32 bytes at off4: low nibbles
// in the low 256 bits, high nibbles in the high 256 bits) and adds it times
// the eight vectors' q8 at off8.
#define Q4K8_RUN(off4, off8, SC) \
	VBROADCASTI64X4 off4(SI), Z20; \
	VPSRLVW shiftZ<>+0(SB), Z20, Z20; \
	VPANDD Z22, Z20, Z20; \
	COL8(off8, Z20, SC)

// Q4K8_MIN sets Y to vector c's min products, lane m = min_m·(bsums[2m] +
// bsums[2m+1]) (bsums at bs; min_m twice in dword m of Y23).
#define Q4K8_MIN(bs, Y) \
	VPMADDWD bs, Y23, Y

// func dotQ4KVNNIx8(acc *float32, w, a *byte, stride, nb int)
TEXT ·dotQ4KVNNIx8(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z22
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

q4k8loop:
	TESTQ CX, CX
	JZ    q4k8done
	ACT8

	// Scales and mins as in dotQ4KAVX2: R8 = scales 0-3, R9 = scales 4-7,
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

	// Z16..Z19: run k's scales (2k low, 2k+1 high) for every int16 product.
	MOVQ R9, BX
	SHLQ $32, BX
	ORQ  R8, BX
	VMOVQ BX, X26
	VPMOVZXBW X26, X26
	VSHUFI32X4 $0, Z26, Z26, Z26
	VPSHUFB q4kScaleZ<>+0(SB), Z26, Z16
	VPSHUFB q4kScaleZ<>+64(SB), Z26, Z17
	VPSHUFB q4kScaleZ<>+128(SB), Z26, Z18
	VPSHUFB q4kScaleZ<>+192(SB), Z26, Z19
	// Y23: min_m in both int16 halves of dword m.
	MOVQ R11, BX
	SHLQ $32, BX
	ORQ  R10, BX
	VMOVQ BX, X23
	VPMOVZXBD X23, Y23
	VPSLLD $16, Y23, Y27
	VPORD Y27, Y23, Y23

	ZERO8
	Q4K8_RUN(16, 4, Z16)
	Q4K8_RUN(48, 68, Z17)
	Q4K8_RUN(80, 132, Z18)
	Q4K8_RUN(112, 196, Z19)
	FOLD8

	// Y26 = d, Y27 = dmin per vector.
	DA8
	MOVWLZX 0(SI), BX
	VMOVD   BX, X26
	VCVTPH2PS X26, X26
	VBROADCASTSS X26, Y26
	VMULPS  Y28, Y26, Y26
	MOVWLZX 2(SI), BX
	VMOVD   BX, X27
	VCVTPH2PS X27, X27
	VBROADCASTSS X27, Y27
	VMULPS  Y28, Y27, Y27

	LANES8
	Q4K8_MIN(260(DI), Y0)
	Q4K8_MIN(260(DI)(R13*1), Y1)
	Q4K8_MIN(260(DI)(R13*2), Y2)
	Q4K8_MIN(260(DX), Y3)
	Q4K8_MIN(260(DI)(R13*4), Y4)
	Q4K8_MIN(260(DX)(R13*2), Y5)
	Q4K8_MIN(260(R14), Y6)
	Q4K8_MIN(260(DX)(R13*4), Y7)
	// Pair p's min lanes (c0k0, c0k1, c1k0, c1k1, c0k2, c0k3, c1k2, c1k3)
	// in Y2p: lane k = m_{2k} + m_{2k+1}.
	VPHADDD Y1, Y0, Y0
	VPHADDD Y3, Y2, Y2
	VPHADDD Y5, Y4, Y4
	VPHADDD Y7, Y6, Y6
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y6, Y6
	VMOVDQU32 permD<>+256(SB), Y28
	VPERMPS Y27, Y28, Y29
	VFNMADD231PS Y29, Y0, Y12
	VMOVDQU32 permD<>+288(SB), Y28
	VPERMPS Y27, Y28, Y29
	VFNMADD231PS Y29, Y2, Y13
	VMOVDQU32 permD<>+320(SB), Y28
	VPERMPS Y27, Y28, Y29
	VFNMADD231PS Y29, Y4, Y14
	VMOVDQU32 permD<>+352(SB), Y28
	VPERMPS Y27, Y28, Y29
	VFNMADD231PS Y29, Y6, Y15

	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q4k8loop

q4k8done:
	VMOVUPS Z8, 0(AX)
	VMOVUPS Z9, 64(AX)
	VMOVUPS Z10, 128(AX)
	VMOVUPS Z11, 192(AX)
	VMOVUPS Y12, 256(AX)
	VMOVUPS Y13, 288(AX)
	VMOVUPS Y14, 320(AX)
	VMOVUPS Y15, 352(AX)
	VZEROUPPER
	RET

// hsumPerm<> (VPERMPS) takes HSUM_PAIRS's results to vector order:
// vectors 0..3 from elements 0, 4, 8, 12, vectors 4..7 from 2, 6, 10, 14.
DATA hsumPerm<>+0(SB)/8, $0x0000000400000000
DATA hsumPerm<>+8(SB)/8, $0x0000000c00000008
DATA hsumPerm<>+16(SB)/8, $0x0000000600000002
DATA hsumPerm<>+24(SB)/8, $0x0000000e0000000a
DATA hsumPerm<>+32(SB)/8, $0
DATA hsumPerm<>+40(SB)/8, $0
DATA hsumPerm<>+48(SB)/8, $0
DATA hsumPerm<>+56(SB)/8, $0
GLOBL hsumPerm<>(SB), RODATA|NOPTR, $64

// HSUM_PAIRS is hsum8 of the eight float lanes of vectors 0..7 held in
// pairs (P0: vectors 0 and 1, P1: 2 and 3, P2: 4 and 5, P3: 6 and 7; each
// vector's lanes in one 256-bit half), the same adds of the same pairs
// for all of them at once (lanes k and k+4, then (l0+l2) + (l1+l3)), into
// Y12 in vector order (Z12-Z15 scratch).
#define HSUM_PAIRS(P0, P1, P2, P3) \
	VSHUFF32X4 $0x88, P1, P0, Z12; \
	VSHUFF32X4 $0xDD, P1, P0, Z13; \
	VADDPS Z13, Z12, Z12; \
	VSHUFF32X4 $0x88, P3, P2, Z13; \
	VSHUFF32X4 $0xDD, P3, P2, Z14; \
	VADDPS Z14, Z13, Z13; \
	VSHUFPS $0x44, Z13, Z12, Z14; \
	VSHUFPS $0xEE, Z13, Z12, Z15; \
	VADDPS Z15, Z14, Z14; \
	VSHUFPS $0xB1, Z14, Z14, Z15; \
	VADDPS Z15, Z14, Z14; \
	VMOVDQU32 hsumPerm<>(SB), Z15; \
	VPERMPS Z14, Z15, Z12

// Q6K_TABLES loads the Q6_K macros' tables into registers once (Z12, Z13:
// q6kScaleZ's masks; Z14, Z15: shiftZ's counts at 64 and 128), rather than
// as memory operands in the loop: the linker aligns them to 32 bytes, not
// 64, so a 512-bit load from them may split a cache line on every block.
#define Q6K_TABLES \
	VMOVDQU64 q6kScaleZ<>+0(SB), Z12; \
	VMOVDQU64 q6kScaleZ<>+64(SB), Z13; \
	VMOVDQU64 shiftZ<>+64(SB), Z14; \
	VMOVDQU64 shiftZ<>+128(SB), Z15

// Q6K8_HALF adds one 128-weight half of a block_q6_K (ql at offl(SI), qh
// at offh(SI), eight scales at offs(SI), q8 from off8(DI)) into Z0..Z7:
// runs 0 and 1 (low nibbles, qh bits 0-1 and 2-3) in one register, runs 2
// and 3 (high nibbles, qh bits 4-5 and 6-7) in the other.
#define Q6K8_HALF(offl, offh, offs, off8a, off8b) \
	VPMOVSXBW offs(SI), X26; \
	VSHUFI32X4 $0, Z26, Z26, Z26; \
	VPSHUFB Z12, Z26, Z16; \
	VPSHUFB Z13, Z26, Z17; \
	VMOVDQU64 offl(SI), Z18; \
	VBROADCASTI64X4 offh(SI), Z19; \
	VPANDD Z22, Z18, Z20; \
	VPSLLVW Z14, Z19, Z21; \
	VPANDD Z23, Z21, Z21; \
	VPORD Z21, Z20, Z20; \
	COL8(off8a, Z20, Z16); \
	VPSRLW $4, Z18, Z20; \
	VPANDD Z22, Z20, Z20; \
	VPSRLVW Z15, Z19, Z21; \
	VPANDD Z23, Z21, Z21; \
	VPORD Z21, Z20, Z20; \
	COL8(off8b, Z20, Z17)

// func dotQ6KVNNIx8(out *float32, w, a *byte, stride, nb int)
TEXT ·dotQ6KVNNIx8(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z22
	MOVL $0x30303030, BX
	VPBROADCASTD BX, Z23
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11

	Q6K_TABLES
	VMOVDQU32 permD<>+0(SB), Z24
	VMOVDQU32 permD<>+64(SB), Z30
	VMOVDQU32 permD<>+128(SB), Z31

q6k8loop:
	TESTQ CX, CX
	JZ    q6k8done
	ACT8
	ZERO8
	Q6K8_HALF(0, 128, 192, 4, 68)
	Q6K8_HALF(64, 160, 200, 132, 196)
	FOLD8

	// lane j += Σ bsums[2j+i]·(-32·scale[2j+i]), i = 0, 1: the row
	// kernel's -32 offset, exact.
	VPMOVSXBW 192(SI), Y16
	VPSLLW $5, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPSUBW Y16, Y17, Y16
	VPDPWSSD 260(DI), Y16, Y0
	VPDPWSSD 260(DI)(R13*1), Y16, Y1
	VPDPWSSD 260(DI)(R13*2), Y16, Y2
	VPDPWSSD 260(DX), Y16, Y3
	VPDPWSSD 260(DI)(R13*4), Y16, Y4
	VPDPWSSD 260(DX)(R13*2), Y16, Y5
	VPDPWSSD 260(R14), Y16, Y6
	VPDPWSSD 260(DX)(R13*4), Y16, Y7

	// Y26 = d per vector.
	DA8
	MOVWLZX 208(SI), BX
	VMOVD   BX, X26
	VCVTPH2PS X26, X26
	VBROADCASTSS X26, Y26
	VMULPS  Y28, Y26, Y26

	LANES2R(Y0, Z0, Y1, Z24, Z8)
	LANES2R(Y2, Z2, Y3, Z30, Z9)
	LANES2R(Y4, Z4, Y5, Z31, Z10)
	LANES2(Y6, Z6, Y7, 192, Z11)

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q6k8loop

q6k8done:
	HSUM_PAIRS(Z8, Z9, Z10, Z11)
	VMOVUPS Y12, (AX)
	VZEROUPPER
	RET

// The eight-vector Q5_K kernel: dotQ4KVNNIx8's scheme with the fifth
// bits, and the row kernel's (dotQ5KAVX2's) float32 steps: the eight lanes
// per vector as for Q4_K, and the mins in one float32 per vector,
// summs = fnmadd(dminw*da, float32(Σ min·s), summs), which dotEight adds
// to hsum8 of the lanes. Besides dotQ4KVNNIx8's registers: Z24 the 32 qh
// bytes in both halves, Z30 0x10 bytes, Y12 the summs (lane c: vector c).

// q5kRot<> holds VPROLVD counts, at 64k for run k = 0..3: in the low eight
// dwords (4-2k) mod 32, in the high eight (3-2k) mod 32; rotating qh by
// them moves bit 2k (sub-block 2k's fifth bit) of every byte of the low
// half, and bit 2k+1 of every byte of the high half, to bit 4 of the
// same byte.
DATA q5kRot<>+0(SB)/8, $0x0000000400000004
DATA q5kRot<>+8(SB)/8, $0x0000000400000004
DATA q5kRot<>+16(SB)/8, $0x0000000400000004
DATA q5kRot<>+24(SB)/8, $0x0000000400000004
DATA q5kRot<>+32(SB)/8, $0x0000000300000003
DATA q5kRot<>+40(SB)/8, $0x0000000300000003
DATA q5kRot<>+48(SB)/8, $0x0000000300000003
DATA q5kRot<>+56(SB)/8, $0x0000000300000003
DATA q5kRot<>+64(SB)/8, $0x0000000200000002
DATA q5kRot<>+72(SB)/8, $0x0000000200000002
DATA q5kRot<>+80(SB)/8, $0x0000000200000002
DATA q5kRot<>+88(SB)/8, $0x0000000200000002
DATA q5kRot<>+96(SB)/8, $0x0000000100000001
DATA q5kRot<>+104(SB)/8, $0x0000000100000001
DATA q5kRot<>+112(SB)/8, $0x0000000100000001
DATA q5kRot<>+120(SB)/8, $0x0000000100000001
DATA q5kRot<>+128(SB)/8, $0x0000000000000000
DATA q5kRot<>+136(SB)/8, $0x0000000000000000
DATA q5kRot<>+144(SB)/8, $0x0000000000000000
DATA q5kRot<>+152(SB)/8, $0x0000000000000000
DATA q5kRot<>+160(SB)/8, $0x0000001f0000001f
DATA q5kRot<>+168(SB)/8, $0x0000001f0000001f
DATA q5kRot<>+176(SB)/8, $0x0000001f0000001f
DATA q5kRot<>+184(SB)/8, $0x0000001f0000001f
DATA q5kRot<>+192(SB)/8, $0x0000001e0000001e
DATA q5kRot<>+200(SB)/8, $0x0000001e0000001e
DATA q5kRot<>+208(SB)/8, $0x0000001e0000001e
DATA q5kRot<>+216(SB)/8, $0x0000001e0000001e
DATA q5kRot<>+224(SB)/8, $0x0000001d0000001d
DATA q5kRot<>+232(SB)/8, $0x0000001d0000001d
DATA q5kRot<>+240(SB)/8, $0x0000001d0000001d
DATA q5kRot<>+248(SB)/8, $0x0000001d0000001d
GLOBL q5kRot<>(SB), RODATA|NOPTR, $256

// Q5K8_RUN decodes run k of a block_q5_K (32 bytes of low nibbles at
// off5: low nibbles in the low 256 bits, high nibbles in the high 256
// bits, each with its fifth bit from qh through q5kRot<>+rot) and adds it
// times the eight vectors' q8 at off8.
#define Q5K8_RUN(off5, off8, rot, SC) \
	VBROADCASTI64X4 off5(SI), Z20; \
	VPSRLVW shiftZ<>+0(SB), Z20, Z20; \
	VPANDD Z22, Z20, Z20; \
	VPROLVD q5kRot<>+rot(SB), Z24, Z21; \
	VPANDD Z30, Z21, Z21; \
	VPORD Z21, Z20, Z20; \
	COL8(off8, Z20, SC)

// func dotQ5KVNNIx8(acc *float32, w, a *byte, stride, nb int) writes
// acc[0:72]: vector c's eight float lanes at acc[8c:8c+8] (pairs as in
// dotQ4KVNNIx8: pair p's in acc[16p:16p+16]), its summs at acc[64+c].
TEXT ·dotQ5KVNNIx8(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z22
	MOVL $0x10101010, BX
	VPBROADCASTD BX, Z30
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12

q5k8loop:
	TESTQ CX, CX
	JZ    q5k8done
	ACT8

	// Scales and mins as in dotQ4KAVX2: R8 = scales 0-3, R9 = scales 4-7,
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

	// Z16..Z19: run k's scales (2k low, 2k+1 high) for every int16 product.
	MOVQ R9, BX
	SHLQ $32, BX
	ORQ  R8, BX
	VMOVQ BX, X26
	VPMOVZXBW X26, X26
	VSHUFI32X4 $0, Z26, Z26, Z26
	VPSHUFB q4kScaleZ<>+0(SB), Z26, Z16
	VPSHUFB q4kScaleZ<>+64(SB), Z26, Z17
	VPSHUFB q4kScaleZ<>+128(SB), Z26, Z18
	VPSHUFB q4kScaleZ<>+192(SB), Z26, Z19
	// Y23: min_m in both int16 halves of dword m.
	MOVQ R11, BX
	SHLQ $32, BX
	ORQ  R10, BX
	VMOVQ BX, X23
	VPMOVZXBD X23, Y23
	VPSLLD $16, Y23, Y27
	VPORD Y27, Y23, Y23

	VBROADCASTI64X4 16(SI), Z24
	ZERO8
	Q5K8_RUN(48, 4, 0, Z16)
	Q5K8_RUN(80, 68, 64, Z17)
	Q5K8_RUN(112, 132, 128, Z18)
	Q5K8_RUN(144, 196, 192, Z19)
	FOLD8

	// Y26 = d, Y27 = dmin per vector.
	DA8
	MOVWLZX 0(SI), BX
	VMOVD   BX, X26
	VCVTPH2PS X26, X26
	VBROADCASTSS X26, Y26
	VMULPS  Y28, Y26, Y26
	MOVWLZX 2(SI), BX
	VMOVD   BX, X27
	VCVTPH2PS X27, X27
	VBROADCASTSS X27, Y27
	VMULPS  Y28, Y27, Y27

	LANES8
	Q4K8_MIN(260(DI), Y0)
	Q4K8_MIN(260(DI)(R13*1), Y1)
	Q4K8_MIN(260(DI)(R13*2), Y2)
	Q4K8_MIN(260(DX), Y3)
	Q4K8_MIN(260(DI)(R13*4), Y4)
	Q4K8_MIN(260(DX)(R13*2), Y5)
	Q4K8_MIN(260(R14), Y6)
	Q4K8_MIN(260(DX)(R13*4), Y7)
	// Lane c of Y1 = vector c's Σ min·s (exact in any order).
	VPHADDD Y1, Y0, Y0
	VPHADDD Y3, Y2, Y2
	VPHADDD Y5, Y4, Y4
	VPHADDD Y7, Y6, Y6
	VPHADDD Y2, Y0, Y0
	VPHADDD Y6, Y4, Y4
	VPERM2I128 $0x20, Y4, Y0, Y1
	VPERM2I128 $0x31, Y4, Y0, Y2
	VPADDD Y2, Y1, Y1
	VCVTDQ2PS Y1, Y1
	VFNMADD231PS Y27, Y1, Y12

	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q5k8loop

q5k8done:
	VMOVUPS Z8, 0(AX)
	VMOVUPS Z9, 64(AX)
	VMOVUPS Z10, 128(AX)
	VMOVUPS Z11, 192(AX)
	VMOVUPS Y12, 256(AX)
	VZEROUPPER
	RET

// The four-vector Q6_K kernel: the eight-vector kernel's scheme for
// vectors 0..3 (at (DI), (DI)(R13*1), (DI)(R13*2), (DX)), for two to four
// rows (a verify pass, a few sequences decoding together), which streams
// its row from memory and so asks for it PF_AHEAD ahead. Z0..Z3 the
// vectors' int32 lanes for runs 0 and 1 of each half block, Z4..Z7 for
// runs 2 and 3 (eight independent VPDPWSSD chains, as the eight-vector
// kernel has; four would wait on the instruction's latency), Z8 and Z9 the
// float lanes of vector pairs 0 and 1.

// ACT4 sets DX to vector 3's block.
#define ACT4 \
	LEAQ (DI)(R13*2), DX; \
	ADDQ R13, DX

#define ZERO4 \
	ZERO8

// COL4 is COL8 for vectors 0..3, into A0..A3.
#define COL4(off, W, SC, A0, A1, A2, A3) \
	VPMADDUBSW off(DI), W, Z21; \
	VPDPWSSD SC, Z21, A0; \
	VPMADDUBSW off(DI)(R13*1), W, Z25; \
	VPDPWSSD SC, Z25, A1; \
	VPMADDUBSW off(DI)(R13*2), W, Z21; \
	VPDPWSSD SC, Z21, A2; \
	VPMADDUBSW off(DX), W, Z25; \
	VPDPWSSD SC, Z25, A3

// FOLD4 adds Z4..Z7 into Z0..Z3, then is FOLD8 for Z0..Z3.
#define FOLD4 \
	VPADDD Z4, Z0, Z0; \
	VPADDD Z5, Z1, Z1; \
	VPADDD Z6, Z2, Z2; \
	VPADDD Z7, Z3, Z3; \
	VEXTRACTI64X4 $1, Z0, Y21; \
	VPADDD Y21, Y0, Y0; \
	VEXTRACTI64X4 $1, Z1, Y25; \
	VPADDD Y25, Y1, Y1; \
	VEXTRACTI64X4 $1, Z2, Y21; \
	VPADDD Y21, Y2, Y2; \
	VEXTRACTI64X4 $1, Z3, Y25; \
	VPADDD Y25, Y3, Y3

// DAZ4 sets X28 to the four vectors' Q8_K d (the rest of Z28 zero).
#define DAZ4 \
	VMOVSS (DI), X28; \
	VINSERTPS $0x10, (DI)(R13*1), X28, X28; \
	VINSERTPS $0x20, (DI)(R13*2), X28, X28; \
	VINSERTPS $0x30, (DX), X28, X28

// Q6K4_HALF is Q6K8_HALF for vectors 0..3.
#define Q6K4_HALF(offl, offh, offs, off8a, off8b) \
	VPMOVSXBW offs(SI), X26; \
	VSHUFI32X4 $0, Z26, Z26, Z26; \
	VPSHUFB Z12, Z26, Z16; \
	VPSHUFB Z13, Z26, Z17; \
	VMOVDQU64 offl(SI), Z18; \
	VBROADCASTI64X4 offh(SI), Z19; \
	VPANDD Z22, Z18, Z20; \
	VPSLLVW Z14, Z19, Z21; \
	VPANDD Z23, Z21, Z21; \
	VPORD Z21, Z20, Z20; \
	COL4(off8a, Z20, Z16, Z0, Z1, Z2, Z3); \
	VPSRLW $4, Z18, Z20; \
	VPANDD Z22, Z20, Z20; \
	VPSRLVW Z15, Z19, Z21; \
	VPANDD Z23, Z21, Z21; \
	VPORD Z21, Z20, Z20; \
	COL4(off8b, Z20, Z17, Z4, Z5, Z6, Z7)

// func dotQ6KVNNIx4(out *float32, w, a *byte, stride, nb int)
// writes out[0:4]: vector c's eight float lanes reduced as hsum8.
TEXT ·dotQ6KVNNIx4(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z22
	MOVL $0x30303030, BX
	VPBROADCASTD BX, Z23
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9

	Q6K_TABLES
	VMOVDQU32 permD<>+0(SB), Z10
	VMOVDQU32 permD<>+64(SB), Z11

q6k4loop:
	TESTQ CX, CX
	JZ    q6k4done
	PREFETCH_Q6K(SI)
	ACT4
	ZERO4
	Q6K4_HALF(0, 128, 192, 4, 68)
	Q6K4_HALF(64, 160, 200, 132, 196)
	FOLD4

	// The -32 offset through the bsums, as in dotQ6KVNNIx8.
	VPMOVSXBW 192(SI), Y16
	VPSLLW $5, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPSUBW Y16, Y17, Y16
	VPDPWSSD 260(DI), Y16, Y0
	VPDPWSSD 260(DI)(R13*1), Y16, Y1
	VPDPWSSD 260(DI)(R13*2), Y16, Y2
	VPDPWSSD 260(DX), Y16, Y3

	// Y26 = d per vector (lanes 0..3).
	DAZ4
	MOVWLZX 208(SI), BX
	VMOVD   BX, X26
	VCVTPH2PS X26, X26
	VBROADCASTSS X26, Y26
	VMULPS  Y28, Y26, Y26

	LANES2R(Y0, Z0, Y1, Z10, Z8)
	LANES2R(Y2, Z2, Y3, Z11, Z9)

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q6k4loop

q6k4done:
	HSUM_PAIRS(Z8, Z9, Z8, Z9)
	VMOVUPS X12, (AX)
	VZEROUPPER
	RET

// Q5K4_RUN is Q5K8_RUN for vectors 0..3, into A0..A3.
#define Q5K4_RUN(off5, off8, rot, SC, A0, A1, A2, A3) \
	VBROADCASTI64X4 off5(SI), Z20; \
	VPSRLVW shiftZ<>+0(SB), Z20, Z20; \
	VPANDD Z22, Z20, Z20; \
	VPROLVD q5kRot<>+rot(SB), Z24, Z21; \
	VPANDD Z30, Z21, Z21; \
	VPORD Z21, Z20, Z20; \
	COL4(off8, Z20, SC, A0, A1, A2, A3)

// func dotQ5KVNNIx4(acc *float32, w, a *byte, stride, nb int) is
// dotQ5KVNNIx8 for vectors 0..3 (runs 0 and 2 into Z0..Z3, 1 and 3 into
// Z4..Z7, as dotQ6KVNNIx4): it writes acc[0:36], vector c's lanes at
// acc[8c:8c+8] and its mins term at acc[32+c].
TEXT ·dotQ5KVNNIx4(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z22
	MOVL $0x10101010, BX
	VPBROADCASTD BX, Z30
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z12, Z12, Z12

q5k4loop:
	TESTQ CX, CX
	JZ    q5k4done
	PREFETCH_Q4K(SI) // a 176-byte Q5_K block spans three lines too
	ACT4

	// Scales and mins as in dotQ4KAVX2: R8 = scales 0-3, R9 = scales 4-7,
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

	// Z16..Z19: run k's scales (2k low, 2k+1 high) for every int16 product.
	MOVQ R9, BX
	SHLQ $32, BX
	ORQ  R8, BX
	VMOVQ BX, X26
	VPMOVZXBW X26, X26
	VSHUFI32X4 $0, Z26, Z26, Z26
	VPSHUFB q4kScaleZ<>+0(SB), Z26, Z16
	VPSHUFB q4kScaleZ<>+64(SB), Z26, Z17
	VPSHUFB q4kScaleZ<>+128(SB), Z26, Z18
	VPSHUFB q4kScaleZ<>+192(SB), Z26, Z19
	// Y23: min_m in both int16 halves of dword m.
	MOVQ R11, BX
	SHLQ $32, BX
	ORQ  R10, BX
	VMOVQ BX, X23
	VPMOVZXBD X23, Y23
	VPSLLD $16, Y23, Y27
	VPORD Y27, Y23, Y23

	VBROADCASTI64X4 16(SI), Z24
	ZERO4
	Q5K4_RUN(48, 4, 0, Z16, Z0, Z1, Z2, Z3)
	Q5K4_RUN(80, 68, 64, Z17, Z4, Z5, Z6, Z7)
	Q5K4_RUN(112, 132, 128, Z18, Z0, Z1, Z2, Z3)
	Q5K4_RUN(144, 196, 192, Z19, Z4, Z5, Z6, Z7)
	FOLD4

	// Y26 = d, Y27 = dmin per vector (lanes 0..3).
	DAZ4
	MOVWLZX 0(SI), BX
	VMOVD   BX, X26
	VCVTPH2PS X26, X26
	VBROADCASTSS X26, Y26
	VMULPS  Y28, Y26, Y26
	MOVWLZX 2(SI), BX
	VMOVD   BX, X27
	VCVTPH2PS X27, X27
	VBROADCASTSS X27, Y27
	VMULPS  Y28, Y27, Y27

	LANES2(Y0, Z0, Y1, 0, Z8)
	LANES2(Y2, Z2, Y3, 64, Z9)
	Q4K8_MIN(260(DI), Y0)
	Q4K8_MIN(260(DI)(R13*1), Y1)
	Q4K8_MIN(260(DI)(R13*2), Y2)
	Q4K8_MIN(260(DX), Y3)
	// Lane c of X0 = vector c's Σ min·s (exact in any order).
	VPHADDD Y1, Y0, Y0
	VPHADDD Y3, Y2, Y2
	VPHADDD Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VCVTDQ2PS X0, X0
	VFNMADD231PS X27, X0, X12

	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q5k4loop

q5k4done:
	VMOVUPS Z8, 0(AX)
	VMOVUPS Z9, 64(AX)
	VMOVUPS X12, 128(AX)
	VZEROUPPER
	RET

// Row kernels (one activation vector, the decode shape) for CPUs with
// AVX-512 BW and VNNI: the same integer lanes as dotQ4KAVX2/dotQ6KAVX2,
// computed two 32-weight runs per 512-bit register (the eight-vector
// kernels' scheme for one vector, accumulated in Z1 and folded to Y1), then
// those kernels' float32 steps, instruction for instruction.

// func dotQ4KVNNI(w, a *byte, nb, amx int) float32
TEXT ·dotQ4KVNNI(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS X13, X13, X13
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z22

q4k1loop:
	TESTQ CX, CX
	JZ    q4k1done
	PREFETCH_Q4K(SI)

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

	MOVQ R9, BX
	SHLQ $32, BX
	ORQ  R8, BX
	VMOVQ BX, X26
	VPMOVZXBW X26, X26
	VSHUFI32X4 $0, Z26, Z26, Z26
	VPSHUFB q4kScaleZ<>+0(SB), Z26, Z16
	VPSHUFB q4kScaleZ<>+64(SB), Z26, Z17
	VPSHUFB q4kScaleZ<>+128(SB), Z26, Z18
	VPSHUFB q4kScaleZ<>+192(SB), Z26, Z19

	VPXORD Z1, Z1, Z1
	VBROADCASTI64X4 16(SI), Z20
	VPSRLVW shiftZ<>+0(SB), Z20, Z20
	VPANDD Z22, Z20, Z20
	VPMADDUBSW 4(DI), Z20, Z21
	VPDPWSSD Z16, Z21, Z1
	VBROADCASTI64X4 48(SI), Z20
	VPSRLVW shiftZ<>+0(SB), Z20, Z20
	VPANDD Z22, Z20, Z20
	VPMADDUBSW 68(DI), Z20, Z21
	VPDPWSSD Z17, Z21, Z1
	VBROADCASTI64X4 80(SI), Z20
	VPSRLVW shiftZ<>+0(SB), Z20, Z20
	VPANDD Z22, Z20, Z20
	VPMADDUBSW 132(DI), Z20, Z21
	VPDPWSSD Z18, Z21, Z1
	VBROADCASTI64X4 112(SI), Z20
	VPSRLVW shiftZ<>+0(SB), Z20, Z20
	VPANDD Z22, Z20, Z20
	VPMADDUBSW 196(DI), Z20, Z21
	VPDPWSSD Z19, Z21, Z1
	VEXTRACTI64X4 $1, Z1, Y21
	VPADDD Y21, Y1, Y1

	// From here on dotQ4KAVX2's float32 steps.
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
	JNE  q4k1amx
	VBROADCASTSS X9, Y9
	VCVTDQ2PS Y1, Y1
	VFMADD231PS Y9, Y1, Y0 // lanes += d*lane
	VBROADCASTSS X10, X10
	VCVTDQ2PS X6, X6
	VFNMADD231PS X10, X6, X13 // mins -= dmin*prod
	JMP  q4k1next

q4k1amx: // ggml's AMX order: two fused steps
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi
	VPSHUFD $0x4E, X6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0xB1, X6, X7
	VPADDD X7, X6, X6
	VMOVD X6, DX // summ
	VCVTSI2SSL AX, X11, X11
	VCVTSI2SSL DX, X12, X12
	VFMADD231SS X11, X9, X0   // acc += d*sumi
	VFNMADD231SS X12, X10, X0 // acc -= dmin*summ

q4k1next:
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q4k1loop

q4k1done:
	CMPQ amx+24(FP), $0
	JNE  q4k1ret
	VMOVHLPS X13, X13, X1 // mins: (m0+m2) + (m1+m3)
	VADDPS X1, X13, X13
	VMOVSHDUP X13, X1
	VADDSS X1, X13, X13
	HSUM8
	VADDSS X13, X0, X0

q4k1ret:
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// Q6K1_HALF is Q6K8_HALF for one vector, into Z1.
#define Q6K1_HALF(offl, offh, offs, off8a, off8b) \
	VPMOVSXBW offs(SI), X26; \
	VSHUFI32X4 $0, Z26, Z26, Z26; \
	VPSHUFB Z12, Z26, Z16; \
	VPSHUFB Z13, Z26, Z17; \
	VMOVDQU64 offl(SI), Z18; \
	VBROADCASTI64X4 offh(SI), Z19; \
	VPANDD Z22, Z18, Z20; \
	VPSLLVW Z14, Z19, Z21; \
	VPANDD Z23, Z21, Z21; \
	VPORD Z21, Z20, Z20; \
	VPMADDUBSW off8a(DI), Z20, Z21; \
	VPDPWSSD Z16, Z21, Z1; \
	VPSRLW $4, Z18, Z20; \
	VPANDD Z22, Z20, Z20; \
	VPSRLVW Z15, Z19, Z21; \
	VPANDD Z23, Z21, Z21; \
	VPORD Z21, Z20, Z20; \
	VPMADDUBSW off8b(DI), Z20, Z21; \
	VPDPWSSD Z17, Z21, Z1

// func dotQ6KVNNI(w, a *byte, nb, amx int) float32
TEXT ·dotQ6KVNNI(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z22
	MOVL $0x30303030, BX
	VPBROADCASTD BX, Z23

	Q6K_TABLES

q6k1loop:
	TESTQ CX, CX
	JZ    q6k1done
	PREFETCH_Q6K(SI)
	VPXORD Z1, Z1, Z1
	Q6K1_HALF(0, 128, 192, 4, 68)
	Q6K1_HALF(64, 160, 200, 132, 196)
	VEXTRACTI64X4 $1, Z1, Y21
	VPADDD Y21, Y1, Y1
	// From here on dotQ6KAVX2's steps: lane j -= 32*(bsums[2j]*scale[2j] +
	// bsums[2j+1]*scale[2j+1]), then the float32 step.
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
	JNE  q6k1amx
	VBROADCASTSS X9, Y9
	VCVTDQ2PS Y1, Y1
	VFMADD231PS Y9, Y1, Y0 // lanes += d*lane
	JMP  q6k1next

q6k1amx: // ggml's AMX order: one fused step
	HSUM_D(Y1, X1, X2)
	VMOVD X1, AX // sumi
	VCVTSI2SSL AX, X11, X11
	VFMADD231SS X11, X9, X0

q6k1next:
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q6k1loop

q6k1done:
	CMPQ amx+24(FP), $0
	JNE  q6k1ret
	HSUM8

q6k1ret:
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET
