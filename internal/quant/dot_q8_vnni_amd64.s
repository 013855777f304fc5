//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// Four- and eight-vector Q8_0 and Q4_0 kernels in ggml's plain order for
// CPUs with AVX-512 BW and VNNI: one weight row times four or eight Q8_0
// activation vectors (vector c at a + c*stride), with the row kernels'
// bits (dotQ80AVX2, dotQ40AVX2; dot_ref.go's q80Lanes).
//
// A 512-bit register holds one 32-byte activation block of each of two
// vectors (a pair), and the weight block in both halves. VPDPBUSD takes
// unsigned bytes, so the weights enter as u = w + 128 (Q8_0: w XOR 0x80)
// or as the unsigned nibble u = w + 8 (Q4_0), and a second VPDPBUSD of
// the constant 128 (or 8) bytes with the activations gives what to take
// off: dword j of each half is then exactly the row kernel's lane j,
// Σ w·a over bytes 4j..4j+3 (at most 4·255·128 before the subtraction: no
// overflow). The float32 steps are the row kernel's, one element per lane
// and vector: lane = fma(dw*da, float32(sum), lane), in the pair's
// register (vector 2p in the low eight floats, 2p+1 in the high eight);
// dotEight and dotFour reduce each vector's eight lanes with hsum8.
//
// Registers: SI weights, DI vector 0, R13 stride, DX vector 3, R14 vector
// 6, CX blocks left, AX acc. Z8..Z11 the float lanes of pairs 0..3, Z12..Z15
// their VPERMPS indices into Y26 (d = dw*da per vector), Z20 the weights u,
// Z22 the offset bytes, Z23 0x0F bytes, Z0..Z7 scratch.

// pairD<> holds VPERMPS indices, at 64p (p = 0..3): 2p for the low eight
// floats, 2p+1 for the high eight (pair p's d).
DATA pairD<>+0(SB)/8, $0x0000000000000000
DATA pairD<>+8(SB)/8, $0x0000000000000000
DATA pairD<>+16(SB)/8, $0x0000000000000000
DATA pairD<>+24(SB)/8, $0x0000000000000000
DATA pairD<>+32(SB)/8, $0x0000000100000001
DATA pairD<>+40(SB)/8, $0x0000000100000001
DATA pairD<>+48(SB)/8, $0x0000000100000001
DATA pairD<>+56(SB)/8, $0x0000000100000001
DATA pairD<>+64(SB)/8, $0x0000000200000002
DATA pairD<>+72(SB)/8, $0x0000000200000002
DATA pairD<>+80(SB)/8, $0x0000000200000002
DATA pairD<>+88(SB)/8, $0x0000000200000002
DATA pairD<>+96(SB)/8, $0x0000000300000003
DATA pairD<>+104(SB)/8, $0x0000000300000003
DATA pairD<>+112(SB)/8, $0x0000000300000003
DATA pairD<>+120(SB)/8, $0x0000000300000003
DATA pairD<>+128(SB)/8, $0x0000000400000004
DATA pairD<>+136(SB)/8, $0x0000000400000004
DATA pairD<>+144(SB)/8, $0x0000000400000004
DATA pairD<>+152(SB)/8, $0x0000000400000004
DATA pairD<>+160(SB)/8, $0x0000000500000005
DATA pairD<>+168(SB)/8, $0x0000000500000005
DATA pairD<>+176(SB)/8, $0x0000000500000005
DATA pairD<>+184(SB)/8, $0x0000000500000005
DATA pairD<>+192(SB)/8, $0x0000000600000006
DATA pairD<>+200(SB)/8, $0x0000000600000006
DATA pairD<>+208(SB)/8, $0x0000000600000006
DATA pairD<>+216(SB)/8, $0x0000000600000006
DATA pairD<>+224(SB)/8, $0x0000000700000007
DATA pairD<>+232(SB)/8, $0x0000000700000007
DATA pairD<>+240(SB)/8, $0x0000000700000007
DATA pairD<>+248(SB)/8, $0x0000000700000007
GLOBL pairD<>(SB), RODATA|NOPTR, $256

// q40Shift<> holds VPSRLVW counts: 0 in 128-bit lanes 0 and 2, 4 in lanes
// 1 and 3 (a Q4_0 block's 16 bytes in every lane: low nibbles, then high).
DATA q40Shift<>+0(SB)/8, $0x0000000000000000
DATA q40Shift<>+8(SB)/8, $0x0000000000000000
DATA q40Shift<>+16(SB)/8, $0x0004000400040004
DATA q40Shift<>+24(SB)/8, $0x0004000400040004
DATA q40Shift<>+32(SB)/8, $0x0000000000000000
DATA q40Shift<>+40(SB)/8, $0x0000000000000000
DATA q40Shift<>+48(SB)/8, $0x0004000400040004
DATA q40Shift<>+56(SB)/8, $0x0004000400040004
GLOBL q40Shift<>(SB), RODATA|NOPTR, $64

// Q0_PAIR adds vectors a and b (their 32 quants at a and b) times the
// weights in Z20 into the pair's float lanes FACC, with d taken through
// the indices PERM.
#define Q0_PAIR(a, b, PERM, FACC) \
	VMOVDQU a, Y0; \
	VINSERTI64X4 $1, b, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPDPBUSD Z0, Z20, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPDPBUSD Z0, Z22, Z2; \
	VPSUBD Z2, Z1, Z1; \
	VCVTDQ2PS Z1, Z1; \
	VPERMPS Z26, PERM, Z3; \
	VFMADD231PS Z3, Z1, FACC

// Q80_W sets Z20 to the Q8_0 weights plus 128, in both halves.
#define Q80_W \
	VBROADCASTI64X4 2(SI), Z20; \
	VPXORD Z22, Z20, Z20

// Q40_W sets Z20 to the Q4_0 nibbles (weights 0..15 from the low nibbles,
// 16..31 from the high), in both halves.
#define Q40_W \
	VBROADCASTI32X4 2(SI), Z20; \
	VPSRLVW q40Shift<>(SB), Z20, Z20; \
	VPANDD Z23, Z20, Z20

// DW sets Y27 to the weight block's d (f16 at 0(SI)) in every lane.
#define DW \
	VPBROADCASTW (SI), X27; \
	VCVTPH2PS X27, Y27

// func dotQ80VNNIx8(acc *float32, w, a *byte, stride, nb int) writes
// acc[0:64]: vector c's eight float lanes at acc[8c:8c+8].
TEXT ·dotQ80VNNIx8(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x80808080, BX
	VPBROADCASTD BX, Z22
	VPXORD Z8, Z8, Z8
	VMOVDQU32 pairD<>+0(SB), Z12
	VPXORD Z9, Z9, Z9
	VMOVDQU32 pairD<>+64(SB), Z13
	VPXORD Z10, Z10, Z10
	VMOVDQU32 pairD<>+128(SB), Z14
	VPXORD Z11, Z11, Z11
	VMOVDQU32 pairD<>+192(SB), Z15

dotq80vnnix8loop:
	TESTQ CX, CX
	JZ    dotq80vnnix8done
	LEAQ (DI)(R13*2), DX
	ADDQ R13, DX
	LEAQ (DX)(R13*2), R14
	ADDQ R13, R14
	Q80_W
	MOVWLZX (DI), BX
	VMOVD BX, X26
	VPINSRW $1, (DI)(R13*1), X26, X26
	VPINSRW $2, (DI)(R13*2), X26, X26
	VPINSRW $3, (DX), X26, X26
	VPINSRW $4, (DI)(R13*4), X26, X26
	VPINSRW $5, (DX)(R13*2), X26, X26
	VPINSRW $6, (R14), X26, X26
	VPINSRW $7, (DX)(R13*4), X26, X26
	VCVTPH2PS X26, Y26
	DW
	VMULPS Y26, Y27, Y26 // d = dw*da
	Q0_PAIR(2(DI), 2(DI)(R13*1), Z12, Z8)
	Q0_PAIR(2(DI)(R13*2), 2(DX), Z13, Z9)
	Q0_PAIR(2(DI)(R13*4), 2(DX)(R13*2), Z14, Z10)
	Q0_PAIR(2(R14), 2(DX)(R13*4), Z15, Z11)
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JMP  dotq80vnnix8loop

dotq80vnnix8done:
	VMOVUPS Z8, 0(AX)
	VMOVUPS Z9, 64(AX)
	VMOVUPS Z10, 128(AX)
	VMOVUPS Z11, 192(AX)
	VZEROUPPER
	RET

// func dotQ80VNNIx4(acc *float32, w, a *byte, stride, nb int) writes
// acc[0:32]: vector c's eight float lanes at acc[8c:8c+8].
TEXT ·dotQ80VNNIx4(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x80808080, BX
	VPBROADCASTD BX, Z22
	VPXORD Z8, Z8, Z8
	VMOVDQU32 pairD<>+0(SB), Z12
	VPXORD Z9, Z9, Z9
	VMOVDQU32 pairD<>+64(SB), Z13

dotq80vnnix4loop:
	TESTQ CX, CX
	JZ    dotq80vnnix4done
	PREFETCHT0 PF_AHEAD(SI)
	LEAQ (DI)(R13*2), DX
	ADDQ R13, DX
	Q80_W
	MOVWLZX (DI), BX
	VMOVD BX, X26
	VPINSRW $1, (DI)(R13*1), X26, X26
	VPINSRW $2, (DI)(R13*2), X26, X26
	VPINSRW $3, (DX), X26, X26
	VCVTPH2PS X26, Y26
	DW
	VMULPS Y26, Y27, Y26 // d = dw*da
	Q0_PAIR(2(DI), 2(DI)(R13*1), Z12, Z8)
	Q0_PAIR(2(DI)(R13*2), 2(DX), Z13, Z9)
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JMP  dotq80vnnix4loop

dotq80vnnix4done:
	VMOVUPS Z8, 0(AX)
	VMOVUPS Z9, 64(AX)
	VZEROUPPER
	RET

// func dotQ40VNNIx8(acc *float32, w, a *byte, stride, nb int) writes
// acc[0:64]: vector c's eight float lanes at acc[8c:8c+8].
TEXT ·dotQ40VNNIx8(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x08080808, BX
	VPBROADCASTD BX, Z22
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z23
	VPXORD Z8, Z8, Z8
	VMOVDQU32 pairD<>+0(SB), Z12
	VPXORD Z9, Z9, Z9
	VMOVDQU32 pairD<>+64(SB), Z13
	VPXORD Z10, Z10, Z10
	VMOVDQU32 pairD<>+128(SB), Z14
	VPXORD Z11, Z11, Z11
	VMOVDQU32 pairD<>+192(SB), Z15

dotq40vnnix8loop:
	TESTQ CX, CX
	JZ    dotq40vnnix8done
	LEAQ (DI)(R13*2), DX
	ADDQ R13, DX
	LEAQ (DX)(R13*2), R14
	ADDQ R13, R14
	Q40_W
	MOVWLZX (DI), BX
	VMOVD BX, X26
	VPINSRW $1, (DI)(R13*1), X26, X26
	VPINSRW $2, (DI)(R13*2), X26, X26
	VPINSRW $3, (DX), X26, X26
	VPINSRW $4, (DI)(R13*4), X26, X26
	VPINSRW $5, (DX)(R13*2), X26, X26
	VPINSRW $6, (R14), X26, X26
	VPINSRW $7, (DX)(R13*4), X26, X26
	VCVTPH2PS X26, Y26
	DW
	VMULPS Y26, Y27, Y26 // d = dw*da
	Q0_PAIR(2(DI), 2(DI)(R13*1), Z12, Z8)
	Q0_PAIR(2(DI)(R13*2), 2(DX), Z13, Z9)
	Q0_PAIR(2(DI)(R13*4), 2(DX)(R13*2), Z14, Z10)
	Q0_PAIR(2(R14), 2(DX)(R13*4), Z15, Z11)
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JMP  dotq40vnnix8loop

dotq40vnnix8done:
	VMOVUPS Z8, 0(AX)
	VMOVUPS Z9, 64(AX)
	VMOVUPS Z10, 128(AX)
	VMOVUPS Z11, 192(AX)
	VZEROUPPER
	RET

// func dotQ40VNNIx4(acc *float32, w, a *byte, stride, nb int) writes
// acc[0:32]: vector c's eight float lanes at acc[8c:8c+8].
TEXT ·dotQ40VNNIx4(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	MOVQ stride+24(FP), R13
	MOVQ nb+32(FP), CX
	MOVL $0x08080808, BX
	VPBROADCASTD BX, Z22
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z23
	VPXORD Z8, Z8, Z8
	VMOVDQU32 pairD<>+0(SB), Z12
	VPXORD Z9, Z9, Z9
	VMOVDQU32 pairD<>+64(SB), Z13

dotq40vnnix4loop:
	TESTQ CX, CX
	JZ    dotq40vnnix4done
	PREFETCHT0 PF_AHEAD(SI)
	LEAQ (DI)(R13*2), DX
	ADDQ R13, DX
	Q40_W
	MOVWLZX (DI), BX
	VMOVD BX, X26
	VPINSRW $1, (DI)(R13*1), X26, X26
	VPINSRW $2, (DI)(R13*2), X26, X26
	VPINSRW $3, (DX), X26, X26
	VCVTPH2PS X26, Y26
	DW
	VMULPS Y26, Y27, Y26 // d = dw*da
	Q0_PAIR(2(DI), 2(DI)(R13*1), Z12, Z8)
	Q0_PAIR(2(DI)(R13*2), 2(DX), Z13, Z9)
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JMP  dotq40vnnix4loop

dotq40vnnix4done:
	VMOVUPS Z8, 0(AX)
	VMOVUPS Z9, 64(AX)
	VZEROUPPER
	RET
