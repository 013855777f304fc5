//go:build amd64 && !purego

package quant

import "unsafe"

//go:noescape
func tinyF16x8(w, a *byte, astride, n int, out *[4]float32)

//go:noescape
func tinyF16x16(w, a *byte, astride, n int, out *[4]float32)

//go:noescape
func tinyF32x8(w, a *byte, astride, n int, out *[4]float32)

//go:noescape
func tinyF32x16(w, a *byte, astride, n int, out *[4]float32)

// tinyFour is tinyBlock4 in AVX2 assembly (16 lanes as two 8-lane
// accumulators per column, folded as _mm512_reduce_add_ps folds them).
// acts holds the four columns stride bytes apart (stride 0: one column).
func tinyFour(t Type, out *[4]float32, w, acts []byte, stride, n int) {
	es := t.TypeSize()
	_, _ = w[:n*es], acts[:3*stride+n*es]
	wp, ap := unsafe.SliceData(w), unsafe.SliceData(acts)
	switch {
	case t == F16 && tinyLanes == 8:
		tinyF16x8(wp, ap, stride, n, out)
	case t == F16:
		tinyF16x16(wp, ap, stride, n, out)
	case tinyLanes == 8:
		tinyF32x8(wp, ap, stride, n, out)
	default:
		tinyF32x16(wp, ap, stride, n, out)
	}
}

// fastDotColsBatch is the batched kernel in llamafile's order: the
// assembly with AVX2 and FMA, else the reference loop.
func fastDotColsBatch(t Type) DotColsFunc {
	if t != F16 && t != F32 {
		return nil
	}
	if !useAVX2 {
		return refDotColsBatch(t)
	}
	return fastColsBatchTable[t]
}

var fastColsBatchTable = map[Type]DotColsFunc{F16: tinyCols(F16, tinyFour), F32: tinyCols(F32, tinyFour)}
