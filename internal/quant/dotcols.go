package quant

import "fmt"

// DotColsFunc multiplies one weight row of n weights with cols activation
// vectors and sets dst[c*stride] to the product with vector c, so one call
// fills one row of a [cols][stride]float32 result. The vectors lie back to
// back in acts, each ActivationSize(t, n) bytes, encoded as for DotFunc.
// This is the prefill shape.
//
// Every dst[c*stride] has exactly the bits the matching DotFunc (the same
// type and order: Kernels.Dot for Kernels.DotCols, Kernels.DotAMX for
// Kernels.DotColsAMX, DotForMatrix for DotColsForMatrix) gives for vector c:
// a batch never rounds differently from one token at a time. Where the
// build has an eight-vector kernel (with AVX-512 VNNI: Q4_K and Q6_K in
// both orders, Q5_K, Q8_0 and Q4_0 in the plain one) or a four-vector
// kernel (with AVX2: Q4_K, Q6_K and Q8_0 in both orders; with AVX-512 VNNI
// also Q5_K and Q4_0 in the plain order), each weight block is decoded
// once for eight or four vectors;
// the vectors left over, and the other types, run the row kernel once per
// vector — except five to seven left over (with an eight-vector kernel) or
// three (with a four-vector one; two with an AVX-512 VNNI one) when acts
// holds room for eight or four there (ColsPadding): they go through the
// wider kernel, which reads the padding and drops its products.
//
// # Notes
//
// Like DotFunc it panics with a *LengthError when n is not whole blocks, w
// is shorter than a row or acts shorter than cols vectors, and it panics when
// dst is shorter than (cols-1)*stride+1 or stride < 1. It writes only those
// dst entries, retains nothing, and is safe for concurrent use on disjoint
// entries.
type DotColsFunc func(dst []float32, stride int, w, acts []byte, n, cols int)

// ColsPadding is the vectors of room past the last one that lets a
// DotColsFunc run a tail of three vectors (two, with an AVX-512 VNNI
// kernel) through its four-vector kernel, or of five to seven through its
// eight-vector kernel: callers that can,
// allocate acts with this many more vectors (any contents; their products
// are never written).
const ColsPadding = 3

// order names the float association a kernel follows: ggml's plain
// vec_dot order, its AMX buffer's, or its CPU_REPACK buffer's (order.go).
type order uint8

const (
	orderPlain order = iota
	orderAMX
	orderRepack
)

// colsKernel wraps the row kernel one of type t into a checked DotColsFunc;
// with vnni set and an eight-vector kernel for t and o (hasEight) it runs
// whole groups of eight vectors through dotEight, then with four set groups
// of four through dotFour (its AVX-512 VNNI kernel where vnni is set and
// there is one), in the same order o as one.
func colsKernel(t Type, one blockFunc, o order, four, vnni bool) DotColsFunc {
	eight := vnni && hasEight(t, o)
	twoPadded := vnni && hasFourVNNI(t, o)
	vt := t.VecDotType()
	bs, wsz, asz := t.BlockSize(), t.TypeSize(), vt.TypeSize()
	return func(dst []float32, stride int, w, acts []byte, n, cols int) {
		if cols <= 0 {
			return
		}
		checkCols(t, dst, stride, w, acts, n, cols, bs, wsz, asz)
		nb := n / bs
		as := nb * asz
		c := 0
		if eight && nb > 0 {
			var out [8]float32
			for ; c+8 <= cols; c += 8 {
				dotEight(t, o, &out, w, acts[c*as:(c+8)*as], as, nb)
				for i, v := range out {
					dst[(c+i)*stride] = v
				}
			}
			// Five to seven vectors left, and acts has room for eight
			// there: one eight-vector call (about one four-vector call's
			// time) beats a four-vector call and one to three more; the
			// padding's products are not written.
			if k := cols - c; k >= 5 && len(acts) >= (c+8)*as {
				dotEight(t, o, &out, w, acts[c*as:(c+8)*as], as, nb)
				for i := range k {
					dst[(c+i)*stride] = out[i]
				}
				c = cols
			}
		}
		if four && nb > 0 {
			var out [4]float32
			for ; c+4 <= cols; c += 4 {
				dotFour(t, o, vnni, &out, w, acts[c*as:(c+4)*as], as, nb)
				for i, v := range out {
					dst[(c+i)*stride] = v
				}
			}
			// Three vectors left (or two, with an AVX-512 VNNI four-vector
			// kernel), and acts has room for four there: one four-vector
			// call (about two row calls' time with AVX2, less with VNNI)
			// beats the row calls; the padding's products are not written.
			if k := cols - c; (k == 3 || k == 2 && twoPadded) && len(acts) >= (c+4)*as {
				dotFour(t, o, vnni, &out, w, acts[c*as:(c+4)*as], as, nb)
				for i := range cols - c {
					dst[(c+i)*stride] = out[i]
				}
				c = cols
			}
		}
		for ; c < cols; c++ {
			if nb == 0 {
				dst[c*stride] = 0
				continue
			}
			dst[c*stride] = one(w, acts[c*as:(c+1)*as], nb)
		}
	}
}

// checkCols panics as DotColsFunc documents unless dst holds cols
// entries stride apart, n is whole blocks of bs elements, w holds one row
// (wsz bytes a block) and acts cols vectors (asz bytes a block).
func checkCols(t Type, dst []float32, stride int, w, acts []byte, n, cols, bs, wsz, asz int) {
	if stride < 1 {
		panic(fmt.Sprintf("quant: dst stride %d", stride))
	}
	_ = dst[(cols-1)*stride]
	if n < 0 || n%bs != 0 {
		panic(&LengthError{Type: t, N: n, Err: ErrRowLength})
	}
	nb := n / bs
	if len(w) < nb*wsz {
		panic(shortErr(t, n, "w", len(w), nb*wsz))
	}
	if as := nb * asz; len(acts) < cols*as {
		panic(shortErr(t, n, "acts", len(acts), cols*as))
	}
}

// colsTable wraps every row kernel of blocks into a DotColsFunc, with the
// build's four-vector kernels of the same order o when four is set and its
// AVX-512 VNNI multi-vector kernels when vnni is set (and the build has them
// for o).
func colsTable(blocks map[Type]blockFunc, o order, four, vnni bool) map[Type]DotColsFunc {
	m := make(map[Type]DotColsFunc, len(blocks))
	for t, f := range blocks {
		m[t] = colsKernel(t, f, o, four && hasFour(t, o, vnni), vnni)
	}
	return m
}

var (
	refColsTable        = colsTable(refBlocks, orderPlain, false, false)
	fastColsTable       = colsTable(fastBlocks, orderPlain, true, true)
	refColsAMXTable     = colsTable(refAMXBlocks, orderAMX, false, false)
	fastColsAMXTable    = colsTable(fastAMXBlocks, orderAMX, true, true)
	refColsRepackTable  = colsTable(refRepackBlocks, orderRepack, false, false)
	fastColsRepackTable = colsTable(fastRepackBlocks, orderRepack, true, true)
	// The AVX2 path of a CPU that has AVX-512 VNNI, kept testable there
	// (see Implementations).
	avx2ColsTable       = colsTable(avx2Blocks, orderPlain, true, false)
	avx2ColsAMXTable    = colsTable(avx2AMXBlocks, orderAMX, true, false)
	avx2ColsRepackTable = colsTable(fastRepackBlocks, orderRepack, true, false)
)

func refDotCols(t Type) DotColsFunc        { return refColsTable[t] }
func fastDotCols(t Type) DotColsFunc       { return fastColsTable[t] }
func refDotColsAMX(t Type) DotColsFunc     { return refColsAMXTable[t] }
func fastDotColsAMX(t Type) DotColsFunc    { return fastColsAMXTable[t] }
func avx2DotCols(t Type) DotColsFunc       { return avx2ColsTable[t] }
func avx2DotColsAMX(t Type) DotColsFunc    { return avx2ColsAMXTable[t] }
func refDotColsRepack(t Type) DotColsFunc  { return refColsRepackTable[t] }
func fastDotColsRepack(t Type) DotColsFunc { return fastColsRepackTable[t] }
func avx2DotColsRepack(t Type) DotColsFunc { return avx2ColsRepackTable[t] }

// Implementations returns every implementation this build can run on this
// CPU, Fast first and Reference last: on amd64 with AVX-512 VNNI, Fast
// (named "avx512vnni") has 512-bit Q4_K and Q6_K kernels, row and batched
// (eight vectors at a time, Q6_K four too), batched Q5_K, Q8_0 and Q4_0
// kernels (eight and four vectors) and Q4_K panel kernels, and the "avx2"
// entry is the kernels a CPU with AVX2 alone runs. All give identical
// bits; conformance tests run each.
func Implementations() []Kernels {
	impls := []Kernels{fastKernels}
	if useVNNI {
		impls = append(impls, Kernels{Name: "avx2", Dot: avx2Dot, DotAMX: avx2DotAMX,
			DotRepack: fastDotRepack, DotCols: avx2DotCols, DotColsAMX: avx2DotColsAMX,
			DotColsRepack: avx2DotColsRepack, DotPanel: avx2DotPanel, DotColsBatch: fastDotColsBatch, QuantizeQ8K: checkedQ8K(quantizeQ8K)})
	}
	return append(impls, referenceKernels)
}

// dotColsFor returns the fast batched kernel for weight type t in the order
// of DotFor. It fails with an error wrapping ErrUnknownType as DotFor does.
func dotColsFor(t Type) (DotColsFunc, error) {
	if f := fastDotCols(t); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("quant: dot product for %v: %w", t, ErrUnknownType)
}

// DotColsForMatrix returns the fast batched kernel for the rows of a matrix
// of type t with the given number of rows, in the order DotForMatrix picks
// for that matrix (ggml's AMX order, its CPU_REPACK order or Kernels.Dot's).
// Errors as DotFor.
func DotColsForMatrix(t Type, rows int) (DotColsFunc, error) {
	switch {
	case matrixAMX(t, rows):
		return fastDotColsAMX(t), nil
	case matrixRepack(t, rows):
		return fastDotColsRepack(t), nil
	}
	return dotColsFor(t)
}

// DotColsForExperts is DotColsForMatrix for one expert's rows of a merged
// expert tensor, in DotForExperts' order. Errors as DotFor.
func DotColsForExperts(t Type, rows int) (DotColsFunc, error) {
	if matrixRepack(t, rows) {
		return fastDotColsRepack(t), nil
	}
	return dotColsFor(t)
}
