package quant

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// llamafile's tinyBLAS order (ggml/src/ggml-cpu/llamafile/sgemm.cpp, the
// x86 builds). ggml's mul_mat hands a product whose activations have at
// least two columns (n >= 2: a prompt batch) to llamafile_sgemm first; for
// F32 weights (F32 activations) and F16 weights (activations converted to
// F16, as for ggml_vec_dot_f16) it runs tinyBLAS<KN, __m256 or __m512>,
// KN = 8 in ggml's AVX2 builds and 16 in its AVX-512 ones, whenever the
// row length k is a multiple of KN and the row count m a multiple of 4
// (else it declines and ggml's vec_dot loop runs). Each output is one
// KN-lane accumulator, zero at the start: lane l takes fma(w_i, a_i, lane)
// for i ≡ l mod KN in index order, and the lanes are reduced by hsum:
// _mm512_reduce_add_ps (lanes l and l+8, then as hsum8) or hsum(__m256),
// which is hsum8. The tile shapes (RM×RN blocks), the thread split and the
// column count change which thread computes an output and when, never this
// association, so every column of a batch has the same bits whatever the
// batch holds.

// llamafileOrder reports whether ggml's CPU backend on this machine runs
// F16 and F32 batches through tinyBLAS: its x86 builds with AVX2 (and F16C,
// which FMA stands in for as in useAVX2) or AVX-512, the ones it loads on
// a CPU with AVX2 and FMA.
var llamafileOrder = runtime.GOARCH == "amd64" && cpu.X86.HasAVX2 && cpu.X86.HasFMA

// tinyLanes is KN, tinyBLAS's lanes per accumulator on this CPU: 16 in
// ggml's AVX-512 builds, 8 in its AVX2 builds.
var tinyLanes = f16Epr

// BatchColumns is the fewest activation columns for which ggml's mul_mat
// multiplies F16 and F32 weights in llamafile's order (DotColsBatchForMatrix):
// one column is always ggml_vec_dot_*'s order.
const BatchColumns = 2

// DotColsBatchForMatrix returns the batched kernel in llamafile's tinyBLAS
// order for a matrix of type t with rows rows of n weights, and ok = true,
// when ggml's mul_mat on this machine computes a product of that matrix
// with at least BatchColumns activation columns that way: t is F16 or F32,
// n is a multiple of the build's lanes (8 or 16), rows a multiple of 4, and
// the CPU is one whose ggml build has llamafile's x86 kernels. Otherwise
// ok is false: such batches keep DotColsForMatrix's order (ggml's vec_dot
// loop). The kernel's activations are t's VecDotType encoding, as for
// DotColsForMatrix.
func DotColsBatchForMatrix(t Type, rows, n int) (DotColsFunc, bool) {
	if !llamafileOrder || (t != F16 && t != F32) || n%tinyLanes != 0 || rows%4 != 0 {
		return nil, false
	}
	return fastDotColsBatch(t), true
}

// refDotColsBatch is the reference batched kernel in llamafile's order for
// F16 and F32 (nil for the other types).
func refDotColsBatch(t Type) DotColsFunc {
	switch t {
	case F16, F32:
		return tinyCols(t, nil)
	}
	return nil
}

// tinyBlock4 computes four columns at once: out[j] = the product of w with
// the vector at acts[j*stride:] (stride 0: the same vector four times) over
// n elements (a multiple of tinyLanes), in llamafile's order.
type tinyBlock4 func(t Type, out *[4]float32, w, acts []byte, stride, n int)

// tinyCols wraps llamafile's order into a checked DotColsFunc: four
// columns at a time through four when it is non-nil, else (and for the
// columns left over when four is nil) the reference loop.
func tinyCols(t Type, four tinyBlock4) DotColsFunc {
	es := t.TypeSize() // bytes per element, weights and activations alike
	return func(dst []float32, stride int, w, acts []byte, n, cols int) {
		if cols <= 0 {
			return
		}
		// Whole groups of tinyLanes elements, es bytes each.
		checkCols(t, dst, stride, w, acts, n, cols, tinyLanes, tinyLanes*es, tinyLanes*es)
		as := n * es
		c := 0
		if four != nil && n > 0 {
			var out [4]float32
			for ; c+4 <= cols; c += 4 {
				four(t, &out, w, acts[c*as:(c+4)*as], as, n)
				for i, v := range out {
					dst[(c+i)*stride] = v
				}
			}
			// Each column left over alone: the same vector four times
			// (stride 0) costs one chain's latency, as one column would.
			for ; c < cols; c++ {
				four(t, &out, w, acts[c*as:(c+1)*as], 0, n)
				dst[c*stride] = out[0]
			}
			return
		}
		for ; c < cols; c++ {
			dst[c*stride] = dotTinyRef(t, w, acts[c*as:(c+1)*as], n)
		}
	}
}

// dotTinyRef is one output of tinyBLAS over n elements (a multiple of
// tinyLanes) of F16 or F32 rows w and a.
func dotTinyRef(t Type, w, a []byte, n int) float32 {
	var acc [16]float32
	e := tinyLanes
	for i := range n {
		var x, y float32
		if t == F16 {
			x, y = f16At(w, 2*i), f16At(a, 2*i)
		} else {
			x, y = f32At(w, i), f32At(a, i)
		}
		acc[i%e] = fma32(x, y, acc[i%e])
	}
	return hsumTiny(&acc, e)
}

// hsumTiny is tinyBLAS's hsum of e lanes: for 16, _mm512_reduce_add_ps
// (lanes l and l+8, then as hsum8); for 8, hsum(__m256), which is hsum8.
func hsumTiny(acc *[16]float32, e int) float32 {
	var l [8]float32
	copy(l[:], acc[:8])
	if e == 16 {
		for i := range l {
			l[i] += acc[i+8]
		}
	}
	return hsum8(&l)
}
