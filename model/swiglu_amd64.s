//go:build amd64 && !purego

#include "textflag.h"

// simd.swiglu's vector part for 16-lane builds (ggml_v_silu with the
// AVX-512 ggml_v_expf), four elements per step. Every fma32 of simd.expf is
// a float64 VFMADD of the widened f32 operands (exact widening) rounded back
// to f32 by VCVTPD2PS — what fma32 computes — and every f32 operation is the
// Go code's, in its order; scalef is the same exact float64 product by 2^n.

DATA eLog2e<>+0(SB)/8, $0x3ff7154760000000
DATA eLog2e<>+8(SB)/8, $0x3ff7154760000000
DATA eLog2e<>+16(SB)/8, $0x3ff7154760000000
DATA eLog2e<>+24(SB)/8, $0x3ff7154760000000
GLOBL eLog2e<>(SB), RODATA|NOPTR, $32
DATA eLn2hi<>+0(SB)/8, $0x3fe62e4000000000
DATA eLn2hi<>+8(SB)/8, $0x3fe62e4000000000
DATA eLn2hi<>+16(SB)/8, $0x3fe62e4000000000
DATA eLn2hi<>+24(SB)/8, $0x3fe62e4000000000
GLOBL eLn2hi<>(SB), RODATA|NOPTR, $32
DATA eLn2lo<>+0(SB)/8, $0x3eb7f7d1c0000000
DATA eLn2lo<>+8(SB)/8, $0x3eb7f7d1c0000000
DATA eLn2lo<>+16(SB)/8, $0x3eb7f7d1c0000000
DATA eLn2lo<>+24(SB)/8, $0x3eb7f7d1c0000000
GLOBL eLn2lo<>(SB), RODATA|NOPTR, $32
DATA eC1<>+0(SB)/8, $0x3f80e40200000000
DATA eC1<>+8(SB)/8, $0x3f80e40200000000
DATA eC1<>+16(SB)/8, $0x3f80e40200000000
DATA eC1<>+24(SB)/8, $0x3f80e40200000000
GLOBL eC1<>(SB), RODATA|NOPTR, $32
DATA eC2<>+0(SB)/8, $0x3fa573e2e0000000
DATA eC2<>+8(SB)/8, $0x3fa573e2e0000000
DATA eC2<>+16(SB)/8, $0x3fa573e2e0000000
DATA eC2<>+24(SB)/8, $0x3fa573e2e0000000
GLOBL eC2<>(SB), RODATA|NOPTR, $32
DATA eC3<>+0(SB)/8, $0x3fc555e660000000
DATA eC3<>+8(SB)/8, $0x3fc555e660000000
DATA eC3<>+16(SB)/8, $0x3fc555e660000000
DATA eC3<>+24(SB)/8, $0x3fc555e660000000
GLOBL eC3<>(SB), RODATA|NOPTR, $32
DATA eC4<>+0(SB)/8, $0x3fdfffdb60000000
DATA eC4<>+8(SB)/8, $0x3fdfffdb60000000
DATA eC4<>+16(SB)/8, $0x3fdfffdb60000000
DATA eC4<>+24(SB)/8, $0x3fdfffdb60000000
GLOBL eC4<>(SB), RODATA|NOPTR, $32
DATA eC5<>+0(SB)/8, $0x3feffffec0000000
DATA eC5<>+8(SB)/8, $0x3feffffec0000000
DATA eC5<>+16(SB)/8, $0x3feffffec0000000
DATA eC5<>+24(SB)/8, $0x3feffffec0000000
GLOBL eC5<>(SB), RODATA|NOPTR, $32
DATA eR<>+0(SB)/8, $0x4168000000000000
DATA eR<>+8(SB)/8, $0x4168000000000000
DATA eR<>+16(SB)/8, $0x4168000000000000
DATA eR<>+24(SB)/8, $0x4168000000000000
GLOBL eR<>(SB), RODATA|NOPTR, $32
DATA eOne<>+0(SB)/8, $0x3ff0000000000000
DATA eOne<>+8(SB)/8, $0x3ff0000000000000
DATA eOne<>+16(SB)/8, $0x3ff0000000000000
DATA eOne<>+24(SB)/8, $0x3ff0000000000000
GLOBL eOne<>(SB), RODATA|NOPTR, $32
DATA eSign<>+0(SB)/8, $0x8000000000000000
DATA eSign<>+8(SB)/8, $0x8000000000000000
DATA eSign<>+16(SB)/8, $0x8000000000000000
DATA eSign<>+24(SB)/8, $0x8000000000000000
GLOBL eSign<>(SB), RODATA|NOPTR, $32
DATA eBias<>+0(SB)/8, $0x00000000000003ff
DATA eBias<>+8(SB)/8, $0x00000000000003ff
DATA eBias<>+16(SB)/8, $0x00000000000003ff
DATA eBias<>+24(SB)/8, $0x00000000000003ff
GLOBL eBias<>(SB), RODATA|NOPTR, $32
DATA fR<>+0(SB)/4, $0x4b400000
DATA fR<>+4(SB)/4, $0x4b400000
DATA fR<>+8(SB)/4, $0x4b400000
DATA fR<>+12(SB)/4, $0x4b400000
GLOBL fR<>(SB), RODATA|NOPTR, $16
DATA fOne<>+0(SB)/4, $0x3f800000
DATA fOne<>+4(SB)/4, $0x3f800000
DATA fOne<>+8(SB)/4, $0x3f800000
DATA fOne<>+12(SB)/4, $0x3f800000
GLOBL fOne<>(SB), RODATA|NOPTR, $16
DATA f192<>+0(SB)/4, $0x43400000
DATA f192<>+4(SB)/4, $0x43400000
DATA f192<>+8(SB)/4, $0x43400000
DATA f192<>+12(SB)/4, $0x43400000
GLOBL f192<>(SB), RODATA|NOPTR, $16
DATA fAbs<>+0(SB)/4, $0x7fffffff
DATA fAbs<>+4(SB)/4, $0x7fffffff
DATA fAbs<>+8(SB)/4, $0x7fffffff
DATA fAbs<>+12(SB)/4, $0x7fffffff
GLOBL fAbs<>(SB), RODATA|NOPTR, $16
DATA f126<>+0(SB)/4, $0x42fc0000
DATA f126<>+4(SB)/4, $0x42fc0000
DATA f126<>+8(SB)/4, $0x42fc0000
DATA f126<>+12(SB)/4, $0x42fc0000
GLOBL f126<>(SB), RODATA|NOPTR, $16
DATA eC5f<>+0(SB)/4, $0x3f7ffff6
DATA eC5f<>+4(SB)/4, $0x3f7ffff6
DATA eC5f<>+8(SB)/4, $0x3f7ffff6
DATA eC5f<>+12(SB)/4, $0x3f7ffff6
GLOBL eC5f<>(SB), RODATA|NOPTR, $16
DATA iOne<>+0(SB)/4, $0x3f800000
DATA iOne<>+4(SB)/4, $0x3f800000
DATA iOne<>+8(SB)/4, $0x3f800000
DATA iOne<>+12(SB)/4, $0x3f800000
GLOBL iOne<>(SB), RODATA|NOPTR, $16
DATA iNeg<>+0(SB)/4, $0x82000000
DATA iNeg<>+4(SB)/4, $0x82000000
DATA iNeg<>+8(SB)/4, $0x82000000
DATA iNeg<>+12(SB)/4, $0x82000000
GLOBL iNeg<>(SB), RODATA|NOPTR, $16
DATA iBig<>+0(SB)/4, $0x7f000000
DATA iBig<>+4(SB)/4, $0x7f000000
DATA iBig<>+8(SB)/4, $0x7f000000
DATA iBig<>+12(SB)/4, $0x7f000000
GLOBL iBig<>(SB), RODATA|NOPTR, $16
DATA fInf<>+0(SB)/4, $0x7f800000
DATA fInf<>+4(SB)/4, $0x7f800000
DATA fInf<>+8(SB)/4, $0x7f800000
DATA fInf<>+12(SB)/4, $0x7f800000
GLOBL fInf<>(SB), RODATA|NOPTR, $16

// ROUND rounds the four float64 of Y to f32 and widens them back (fma32's
// result as the next fma32's operand); X is Y's low half.
#define ROUND(Y, X) \
	VCVTPD2PSY Y, X; \
	VCVTPS2PD X, Y

// SW_ENTER loads the arguments (DI h, SI gate, DX up, CX quads) and the
// constants both kernels keep in registers.
#define SW_ENTER \
	MOVQ h+0(FP), DI; \
	MOVQ gate+8(FP), SI; \
	MOVQ up+16(FP), DX; \
	MOVQ quads+24(FP), CX; \
	VMOVUPD eLog2e<>(SB), Y15; \
	VMOVUPD eLn2hi<>(SB), Y14; \
	VMOVUPD eLn2lo<>(SB), Y13; \
	VMOVUPD eC1<>(SB), Y12; \
	VMOVUPD eC3<>(SB), Y11; \
	VMOVUPD eC5<>(SB), Y10; \
	VXORPS X9, X9, X9

// EXPF_REDUCE is the part of ggml_v_expf both widths share, for x = 0 - g
// of the four gates at (SI) (g kept in X0): z = fma32(x, log2e, r) (f32 in
// X8), n = z - r (X2), b = fma32(-n, ln2lo, fma32(-n, ln2hi, x)) widened
// in Y4, u = b*b widened in Y5, t = fma32(fma32(c1, b, c2), u, fma32(c3,
// b, c4)) widened in Y3.
#define EXPF_REDUCE \
	VMOVUPS (SI), X0; \
	VSUBPS X0, X9, X1; \
	VCVTPS2PD X1, Y1; \
	VMOVAPD Y1, Y2; \
	VFMADD213PD eR<>(SB), Y15, Y2; \
	VCVTPD2PSY Y2, X8; \
	VSUBPS fR<>(SB), X8, X2; \
	VCVTPS2PD X2, Y3; \
	VXORPD eSign<>(SB), Y3, Y3; \
	VMOVAPD Y1, Y4; \
	VFMADD231PD Y14, Y3, Y4; \
	ROUND(Y4, X4); \
	VFMADD231PD Y13, Y3, Y4; \
	VCVTPD2PSY Y4, X4; \
	VMULPS X4, X4, X5; \
	VCVTPS2PD X4, Y4; \
	VCVTPS2PD X5, Y5; \
	VMOVAPD Y4, Y1; \
	VFMADD213PD eC2<>(SB), Y12, Y1; \
	ROUND(Y1, X1); \
	VMOVAPD Y4, Y3; \
	VFMADD213PD eC4<>(SB), Y11, Y3; \
	ROUND(Y3, X3); \
	VFMADD231PD Y5, Y1, Y3; \
	ROUND(Y3, X3)

// SW_STORE writes h = g / (1 + e) * up for e = expf(x) in X4 and moves the
// pointers on by four elements.
#define SW_STORE \
	VADDPS fOne<>(SB), X4, X4; \
	VDIVPS X4, X0, X0; \
	VMULPS (DX), X0, X0; \
	VMOVUPS X0, (DI); \
	ADDQ $16, SI; \
	ADDQ $16, DX; \
	ADDQ $16, DI; \
	DECQ CX

// func swiglu16(h, gate, up *float32, quads int)
//
// h[i] = gate[i] / (1 + expf(0-gate[i])) * up[i] for i < 4*quads.
TEXT ·swiglu16(SB), NOSPLIT, $0-32
	SW_ENTER

swloop:
	TESTQ CX, CX
	JZ    swdone
	EXPF_REDUCE
	VFMADD213PD eOne<>(SB), Y10, Y4 // fma32(c5, b, 1)
	ROUND(Y4, X4)
	VFMADD231PD Y5, Y3, Y4          // j = fma32(t, u, ·)
	ROUND(Y4, X4)

	// scalef(j, n): j * 2^n in float64, rounded once. n is integral;
	// outside ±192 (or NaN) the blend below replaces the result.
	VCVTTPS2DQ X2, X1
	VPMOVSXDQ X1, Y1
	VPADDQ eBias<>(SB), Y1, Y1
	VPSLLQ $52, Y1, Y1
	VMULPD Y1, Y4, Y4
	VCVTPD2PSY Y4, X4 // e

	// |n| > 192 or n NaN: e = n <= 0 ? 0 : +Inf.
	VANDPS fAbs<>(SB), X2, X3
	VCMPPS $0x1E, f192<>(SB), X3, X3 // |n| > 192 (ordered)
	VCMPPS $0x03, X2, X2, X5         // n unordered
	VORPS X5, X3, X3
	VCMPPS $0x02, X9, X2, X5         // n <= 0 (false for NaN)
	VANDNPS fInf<>(SB), X5, X5
	VBLENDVPS X3, X5, X4, X4

	SW_STORE
	JMP  swloop

swdone:
	VZEROUPPER
	RET
