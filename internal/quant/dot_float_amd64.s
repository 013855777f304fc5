//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// The BF16 dot product keeps 32 float32 lanes in Y0..Y3 (lane l holds the
// elements i with i%32 == l, added in index order: each product rounded,
// then added — VMULPS then VADDPS, never an FMA) and stores them to acc; the
// Go side adds the tail and reduces the lanes (see reduceLanes). The F32
// and F16 ones follow ggml's orders instead (FMA lanes, see order.go); they
// too store the lanes and leave the tail and the reduction to Go.

#define LANES_STEP(Y, W, A) \
	VMULPS A, W, W; \
	VADDPS W, Y, Y

#define LANES_STORE \
	VMOVUPS Y0, 0(BX); \
	VMOVUPS Y1, 32(BX); \
	VMOVUPS Y2, 64(BX); \
	VMOVUPS Y3, 96(BX); \
	VZEROUPPER

// F32_FMA adds the products of the 8 float32 pairs at off(SI), off(DI) to
// the lanes of Y with one FMA each (ggml's F32 order, see order.go).
#define F32_FMA(off, Y) \
	VMOVUPS off(SI), Y8; \
	VMOVUPS off(DI), Y9; \
	VFMADD231PS Y9, Y8, Y

// func dotF32FMA64AVX2(w, a *byte, n int, acc *[64]float32)
// n is a multiple of 64; lane k (Y(k/8) element k%8) takes elements i ≡ k mod 64.
TEXT ·dotF32FMA64AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

f32x64loop:
	CMPQ CX, $64
	JLT  f32x64done
	F32_FMA(0, Y0)
	F32_FMA(32, Y1)
	F32_FMA(64, Y2)
	F32_FMA(96, Y3)
	F32_FMA(128, Y4)
	F32_FMA(160, Y5)
	F32_FMA(192, Y6)
	F32_FMA(224, Y7)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $64, CX
	JMP  f32x64loop

f32x64done:
	MOVQ acc+24(FP), BX
	VMOVUPS Y4, 128(BX)
	VMOVUPS Y5, 160(BX)
	VMOVUPS Y6, 192(BX)
	VMOVUPS Y7, 224(BX)
	LANES_STORE
	RET

// func dotF32FMA32AVX2(w, a *byte, n int, acc *[64]float32)
// n is a multiple of 32; lane k takes elements i ≡ k mod 32; acc[32:] is
// left alone.
TEXT ·dotF32FMA32AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f32x32loop:
	CMPQ CX, $32
	JLT  f32x32done
	F32_FMA(0, Y0)
	F32_FMA(32, Y1)
	F32_FMA(64, Y2)
	F32_FMA(96, Y3)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  f32x32loop

f32x32done:
	MOVQ acc+24(FP), BX
	LANES_STORE
	RET

// F16_FMA adds the products of the 8 binary16 pairs at off(SI), off(DI) to
// the lanes of Y with one FMA each (ggml's F16 order, see order.go).
#define F16_FMA(off, Y) \
	VCVTPH2PS off(SI), Y8; \
	VCVTPH2PS off(DI), Y9; \
	VFMADD231PS Y9, Y8, Y

// func dotF16FMA64AVX2(w, a *byte, n int, acc *[64]float32)
// n is a multiple of 64; lane k (Y(k/8) element k%8) takes elements i ≡ k mod 64.
TEXT ·dotF16FMA64AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

f16x64loop:
	CMPQ CX, $64
	JLT  f16x64done
	F16_FMA(0, Y0)
	F16_FMA(16, Y1)
	F16_FMA(32, Y2)
	F16_FMA(48, Y3)
	F16_FMA(64, Y4)
	F16_FMA(80, Y5)
	F16_FMA(96, Y6)
	F16_FMA(112, Y7)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $64, CX
	JMP  f16x64loop

f16x64done:
	MOVQ acc+24(FP), BX
	VMOVUPS Y4, 128(BX)
	VMOVUPS Y5, 160(BX)
	VMOVUPS Y6, 192(BX)
	VMOVUPS Y7, 224(BX)
	LANES_STORE
	RET

// func dotF16FMA32AVX2(w, a *byte, n int, acc *[64]float32)
// n is a multiple of 32; lane k (Y(k/8) element k%8) takes elements i ≡ k
// mod 32; acc[32:] is left alone.
TEXT ·dotF16FMA32AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f16x32loop:
	CMPQ CX, $32
	JLT  f16x32done
	F16_FMA(0, Y0)
	F16_FMA(16, Y1)
	F16_FMA(32, Y2)
	F16_FMA(48, Y3)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP  f16x32loop

f16x32done:
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
