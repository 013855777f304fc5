//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

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
