//go:build amd64 && !purego

#include "textflag.h"

// simd.swiglu's vector part for 8-lane (AVX2) builds: ggml_v_silu with the
// AVX2 ggml_v_expf on eight f32 lanes, with the instructions ggml's
// intrinsics compile to (VFMADD/VFNMADD on f32 round once, as fma32), so
// the lanes have the bits of simd.expf's AVX2 branch and the divide and
// multiply of simd.swiglu.
DATA sR<>+0(SB)/8, $0x4b4000004b400000
DATA sR<>+8(SB)/8, $0x4b4000004b400000
DATA sR<>+16(SB)/8, $0x4b4000004b400000
DATA sR<>+24(SB)/8, $0x4b4000004b400000
GLOBL sR<>(SB), RODATA|NOPTR, $32
DATA sLog2e<>+0(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA sLog2e<>+8(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA sLog2e<>+16(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA sLog2e<>+24(SB)/8, $0x3fb8aa3b3fb8aa3b
GLOBL sLog2e<>(SB), RODATA|NOPTR, $32
DATA sLn2hi<>+0(SB)/8, $0x3f3172003f317200
DATA sLn2hi<>+8(SB)/8, $0x3f3172003f317200
DATA sLn2hi<>+16(SB)/8, $0x3f3172003f317200
DATA sLn2hi<>+24(SB)/8, $0x3f3172003f317200
GLOBL sLn2hi<>(SB), RODATA|NOPTR, $32
DATA sLn2lo<>+0(SB)/8, $0x35bfbe8e35bfbe8e
DATA sLn2lo<>+8(SB)/8, $0x35bfbe8e35bfbe8e
DATA sLn2lo<>+16(SB)/8, $0x35bfbe8e35bfbe8e
DATA sLn2lo<>+24(SB)/8, $0x35bfbe8e35bfbe8e
GLOBL sLn2lo<>(SB), RODATA|NOPTR, $32
DATA sC1<>+0(SB)/8, $0x3c0720103c072010
DATA sC1<>+8(SB)/8, $0x3c0720103c072010
DATA sC1<>+16(SB)/8, $0x3c0720103c072010
DATA sC1<>+24(SB)/8, $0x3c0720103c072010
GLOBL sC1<>(SB), RODATA|NOPTR, $32
DATA sC2<>+0(SB)/8, $0x3d2b9f173d2b9f17
DATA sC2<>+8(SB)/8, $0x3d2b9f173d2b9f17
DATA sC2<>+16(SB)/8, $0x3d2b9f173d2b9f17
DATA sC2<>+24(SB)/8, $0x3d2b9f173d2b9f17
GLOBL sC2<>(SB), RODATA|NOPTR, $32
DATA sC3<>+0(SB)/8, $0x3e2aaf333e2aaf33
DATA sC3<>+8(SB)/8, $0x3e2aaf333e2aaf33
DATA sC3<>+16(SB)/8, $0x3e2aaf333e2aaf33
DATA sC3<>+24(SB)/8, $0x3e2aaf333e2aaf33
GLOBL sC3<>(SB), RODATA|NOPTR, $32
DATA sC4<>+0(SB)/8, $0x3efffedb3efffedb
DATA sC4<>+8(SB)/8, $0x3efffedb3efffedb
DATA sC4<>+16(SB)/8, $0x3efffedb3efffedb
DATA sC4<>+24(SB)/8, $0x3efffedb3efffedb
GLOBL sC4<>(SB), RODATA|NOPTR, $32
DATA sC5<>+0(SB)/8, $0x3f7ffff63f7ffff6
DATA sC5<>+8(SB)/8, $0x3f7ffff63f7ffff6
DATA sC5<>+16(SB)/8, $0x3f7ffff63f7ffff6
DATA sC5<>+24(SB)/8, $0x3f7ffff63f7ffff6
GLOBL sC5<>(SB), RODATA|NOPTR, $32
DATA sOne<>+0(SB)/8, $0x3f8000003f800000
DATA sOne<>+8(SB)/8, $0x3f8000003f800000
DATA sOne<>+16(SB)/8, $0x3f8000003f800000
DATA sOne<>+24(SB)/8, $0x3f8000003f800000
GLOBL sOne<>(SB), RODATA|NOPTR, $32
DATA sAbs<>+0(SB)/8, $0x7fffffff7fffffff
DATA sAbs<>+8(SB)/8, $0x7fffffff7fffffff
DATA sAbs<>+16(SB)/8, $0x7fffffff7fffffff
DATA sAbs<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL sAbs<>(SB), RODATA|NOPTR, $32
DATA s126<>+0(SB)/8, $0x42fc000042fc0000
DATA s126<>+8(SB)/8, $0x42fc000042fc0000
DATA s126<>+16(SB)/8, $0x42fc000042fc0000
DATA s126<>+24(SB)/8, $0x42fc000042fc0000
GLOBL s126<>(SB), RODATA|NOPTR, $32
DATA s192<>+0(SB)/8, $0x4340000043400000
DATA s192<>+8(SB)/8, $0x4340000043400000
DATA s192<>+16(SB)/8, $0x4340000043400000
DATA s192<>+24(SB)/8, $0x4340000043400000
GLOBL s192<>(SB), RODATA|NOPTR, $32
DATA sNeg<>+0(SB)/8, $0x8200000082000000
DATA sNeg<>+8(SB)/8, $0x8200000082000000
DATA sNeg<>+16(SB)/8, $0x8200000082000000
DATA sNeg<>+24(SB)/8, $0x8200000082000000
GLOBL sNeg<>(SB), RODATA|NOPTR, $32
DATA sBig<>+0(SB)/8, $0x7f0000007f000000
DATA sBig<>+8(SB)/8, $0x7f0000007f000000
DATA sBig<>+16(SB)/8, $0x7f0000007f000000
DATA sBig<>+24(SB)/8, $0x7f0000007f000000
GLOBL sBig<>(SB), RODATA|NOPTR, $32

// EXPF8 is ggml_v_expf (AVX2) of the eight lanes of Y1 into Y12, with the
// f32 FMAs its intrinsics compile to: z = fma(x, log2e, r), n = z - r,
// b = x - n*ln2hi - n*ln2lo (fused), e = bits(z) << 23, k = e + bits(1),
// j = fma(fma(fma(c1, b, c2), u, fma(c3, b, c4)), u, c5*b) with u = b*b,
// r1 = fma(j, k, k); where some |n| > 126 the blend of r2 = fma(s2, j, s2)*s1
// and, past 192, r3 = s1*s1 (s1, s2 from g = n <= 0 ? 0x82000000 : 0), as
// simd.expf's AVX2 branch. It jumps to done when no lane needs the blend.
// Y1..Y15 are scratch.
#define EXPF8(done) \
	VMOVAPS sR<>(SB), Y2 \
	VFMADD231PS sLog2e<>(SB), Y1, Y2 \
	VSUBPS sR<>(SB), Y2, Y3 \
	VFNMADD231PS sLn2hi<>(SB), Y3, Y1 \
	VFNMADD231PS sLn2lo<>(SB), Y3, Y1 \
	VPSLLD $23, Y2, Y4 \
	VPADDD sOne<>(SB), Y4, Y5 \
	VMULPS Y1, Y1, Y6 \
	VMOVAPS sC2<>(SB), Y7 \
	VFMADD231PS sC1<>(SB), Y1, Y7 \
	VMOVAPS sC4<>(SB), Y8 \
	VFMADD231PS sC3<>(SB), Y1, Y8 \
	VFMADD231PS Y6, Y7, Y8 \
	VMULPS sC5<>(SB), Y1, Y9 \
	VFMADD231PS Y6, Y8, Y9 \
	VANDPS sAbs<>(SB), Y3, Y10 \
	VCMPPS $0x1E, s126<>(SB), Y10, Y11 \
	VMOVAPS Y5, Y12 \
	VFMADD231PS Y9, Y5, Y12 \
	VMOVMSKPS Y11, AX \
	TESTL AX, AX \
	JZ done \
	VXORPS Y13, Y13, Y13 \
	VCMPPS $0x12, Y13, Y3, Y13 \
	VANDPS sNeg<>(SB), Y13, Y13 \
	VPADDD sBig<>(SB), Y13, Y14 \
	VPSUBD Y13, Y4, Y15 \
	VMOVAPS Y15, Y4 \
	VFMADD231PS Y9, Y15, Y4 \
	VMULPS Y14, Y4, Y4 \
	VMULPS Y14, Y14, Y14 \
	VCMPPS $0x1E, s192<>(SB), Y10, Y13 \
	VBLENDVPS Y11, Y4, Y12, Y12 \
	VBLENDVPS Y13, Y14, Y12, Y12

// func swiglu8(h, gate, up *float32, octs int)
//
// h[i] = gate[i] / (1 + expf(0-gate[i])) * up[i] for i < 8*octs.
TEXT ·swiglu8(SB), NOSPLIT, $0-32
	MOVQ h+0(FP), SI
	MOVQ gate+8(FP), DI
	MOVQ up+16(FP), DX
	MOVQ octs+24(FP), CX
	TESTQ CX, CX
	JZ sw8done

sw8loop:
	VMOVUPS (DI), Y0                  // g
	VXORPS Y1, Y1, Y1
	VSUBPS Y0, Y1, Y1                 // x = 0 - g
	EXPF8(sw8silu)

sw8silu:
	VADDPS sOne<>(SB), Y12, Y12       // 1 + expf(x)
	VDIVPS Y12, Y0, Y0                // g / ·
	VMULPS (DX), Y0, Y0               // · * up
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ sw8loop

sw8done:
	VZEROUPPER
	RET

// func expSum8(w *float32, octs int, maxW float32) float64
//
// simd.softmax's vector part for 8-lane builds: w[i] = ggml_v_expf(w[i] -
// maxW) for i < 8*octs (the expf of swiglu8, lanes for lanes), and the sum,
// in float64 and in order, of each vector's horizontal sum (lanes k and
// k+4, then (l0+l2)+(l1+l3), in f32), as ggml_vec_soft_max_f32 sums.
TEXT ·expSum8(SB), NOSPLIT, $16-32
	MOVQ w+0(FP), DI
	MOVQ octs+8(FP), CX
	VXORPD X0, X0, X0
	VMOVSD X0, 0(SP)
	TESTQ CX, CX
	JZ es8done

es8loop:
	VBROADCASTSS maxW+16(FP), Y0
	VMOVUPS (DI), Y1
	VSUBPS Y0, Y1, Y1                 // x = w - max
	EXPF8(es8sum)


es8sum:
	VMOVUPS Y12, (DI)
	VEXTRACTF128 $1, Y12, X13
	VADDPS X13, X12, X13              // lanes k and k+4
	VMOVHLPS X13, X13, X11
	VADDPS X11, X13, X11              // (l0+l2), (l1+l3)
	VMOVSHDUP X11, X10
	VADDSS X10, X11, X11
	VCVTSS2SD X11, X11, X11
	VADDSD 0(SP), X11, X11
	VMOVSD X11, 0(SP)
	ADDQ $32, DI
	DECQ CX
	JNZ es8loop

es8done:
	VMOVSD 0(SP), X0
	VMOVSD X0, ret+24(FP)
	VZEROUPPER
	RET

// func roundF16x8(p *float32, octs int)
//
// p[i] = roundF16(p[i]) for i < 8*octs: to binary16 with rounding to
// nearest even and back (both exact but the first), eight at a time.
TEXT ·roundF16x8(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ octs+8(FP), CX
	TESTQ CX, CX
	JZ rf8done

rf8loop:
	VMOVUPS (DI), Y0
	VCVTPS2PH $0, Y0, X1
	VCVTPH2PS X1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ rf8loop

rf8done:
	VZEROUPPER
	RET
