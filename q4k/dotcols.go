package q4k

import "fmt"

// DotColsFunc multiplies one weight row of n weights with cols activation
// vectors and sets dst[c*stride] to the product with vector c, so one call
// fills one row of a [cols][stride]float32 result. The vectors lie back to
// back in acts, each ActivationSize(t, n) bytes, encoded as for DotFunc. This is the prefill shape: where the build has a batched
// kernel (Q4_K and Q6_K with AVX2) each weight block is decoded once for
// four vectors instead of once per vector.
//
// Every dst[c*stride] has exactly the bits the type's DotFunc gives for vector c:
// a batch never rounds differently from one token at a time.
//
// # Notes
//
// Like DotFunc it panics with a *LengthError when n is not whole blocks, w
// is shorter than a row or acts shorter than cols vectors, and it panics when
// dst is shorter than (cols-1)*stride+1 or stride < 1. It writes only those
// dst entries, retains nothing, and is safe for concurrent use on disjoint
// entries.
type DotColsFunc func(dst []float32, stride int, w, acts []byte, n, cols int)

// colsKernel wraps a row kernel and, when four is set, the build's
// four-vector kernel for t (dotFour) into a checked DotColsFunc.
func colsKernel(t Type, one func(w, a []byte, nb int) float32, four bool) DotColsFunc {
	vt := t.VecDotType()
	bs, wsz, asz := t.BlockSize(), t.TypeSize(), vt.TypeSize()
	return func(dst []float32, stride int, w, acts []byte, n, cols int) {
		if cols <= 0 {
			return
		}
		if stride < 1 {
			panic(fmt.Sprintf("q4k: dst stride %d", stride))
		}
		_ = dst[(cols-1)*stride]
		if n < 0 || n%bs != 0 {
			panic(&LengthError{Type: t, N: n, Err: ErrRowLength})
		}
		nb := n / bs
		if len(w) < nb*wsz {
			panic(shortErr(t, n, "w", len(w), nb*wsz))
		}
		as := nb * asz
		if len(acts) < cols*as {
			panic(shortErr(t, n, "acts", len(acts), cols*as))
		}
		c := 0
		if four && nb > 0 {
			var out [4]float32
			for ; c+4 <= cols; c += 4 {
				dotFour(t, &out, w, acts[c*as:(c+4)*as], as, nb)
				for i, v := range out {
					dst[(c+i)*stride] = v
				}
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

// colsTable builds the DotColsFunc of every weight type from the row
// kernels (the F32/F16/BF16 ones take element counts, the others blocks),
// with the build's four-vector kernels when fast is set.
func colsTable(one map[Type]func(w, a []byte, nb int) float32, fast bool) map[Type]DotColsFunc {
	m := make(map[Type]DotColsFunc, len(one))
	for t, f := range one {
		m[t] = colsKernel(t, f, fast && hasFour(t))
	}
	return m
}

var (
	refColsTable = colsTable(map[Type]func(w, a []byte, nb int) float32{
		Q4_K: dotQ4_KRef, Q5_K: dotQ5_KRef, Q6_K: dotQ6_KRef, Q4_0: dotQ4_0Ref, Q5_0: dotQ5_0Ref,
		Q8_0: dotQ8_0Ref, F32: dotF32Ref, F16: dotF16Ref, BF16: dotBF16Ref,
	}, false)
	fastColsTable = colsTable(map[Type]func(w, a []byte, nb int) float32{
		Q4_K: dotQ4_K, Q5_K: dotQ5_K, Q6_K: dotQ6_K, Q4_0: dotQ4_0, Q5_0: dotQ5_0,
		Q8_0: dotQ8_0, F32: dotF32, F16: dotF16, BF16: dotBF16,
	}, true)
)

func refDotCols(t Type) DotColsFunc  { return refColsTable[t] }
func fastDotCols(t Type) DotColsFunc { return fastColsTable[t] }

// DotColsFor returns the fast batched kernel for weight type t. It fails
// with an error wrapping ErrUnknownType as DotFor does.
func DotColsFor(t Type) (DotColsFunc, error) {
	if f := fastDotCols(t); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("q4k: dot product for %v: %w", t, ErrUnknownType)
}
