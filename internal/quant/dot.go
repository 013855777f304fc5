package quant

import "fmt"

// DotFunc multiplies one weight row of n weights with an activation vector of
// n values encoded in the weight type's VecDotType (see QuantizeActivation),
// and returns the dot product.
//
// # Notes
//
// n must be a multiple of the weight type's block size and both slices must
// hold a whole row; a DotFunc panics with a *LengthError otherwise (the checks
// are what keep the assembly in bounds). Validate shapes once with
// Type.RowSize and ActivationSize, then call the DotFunc in the hot loop. It
// neither retains nor writes its arguments and is safe for concurrent use.
type DotFunc func(w, act []byte, n int) float32

// Kernels is one implementation of the row kernels. Reference holds the
// portable loops that define the results; Fast holds what this build runs
// (assembly on amd64 with AVX2, the reference loops elsewhere or with -tags
// purego). Both give identical bits.
type Kernels struct {
	// Name says which implementation this is ("reference", "avx2").
	Name string
	// Dot returns the kernel for weight type t, or nil when t has no dot
	// product (the activation types Q8_1 and Q8_K, and unknown types).
	Dot func(t Type) DotFunc
	// DotAMX returns the kernel for weight type t in the order of ggml's
	// AMX buffer (see DotForMatrix): Q4_0, Q4_K, Q5_K, Q6_K and Q8_0; nil
	// for the other types, which ggml has no AMX kernel for.
	DotAMX func(t Type) DotFunc
	// DotRepack returns the kernel for weight type t in the order of ggml's
	// CPU_REPACK buffer (see DotForMatrix): Q4_K; nil for the other types.
	DotRepack func(t Type) DotFunc
	// DotCols returns the batched kernel for weight type t (one row, several
	// activation vectors) in Dot's order, or nil as Dot does.
	DotCols func(t Type) DotColsFunc
	// DotColsAMX returns the batched kernel for weight type t in DotAMX's
	// order, or nil as DotAMX does.
	DotColsAMX func(t Type) DotColsFunc
	// DotColsRepack returns the batched kernel for weight type t in
	// DotRepack's order, or nil as DotRepack does.
	DotColsRepack func(t Type) DotColsFunc
	// DotPanel returns the kernel over one panel of PackPanels (eight rows
	// of type t, several activation vectors) in DotRepack's order: Q4_K;
	// nil for the other types.
	DotPanel func(t Type) DotPanelFunc
	// DotColsBatch returns the batched kernel for weight type t in
	// llamafile's tinyBLAS order (ggml's F16 and F32 products of two or
	// more columns, see DotColsBatchForMatrix): F16 and F32; nil for the
	// other types.
	DotColsBatch func(t Type) DotColsFunc
	// QuantizeQ8K encodes len(x)/256 whole Q8_K blocks into dst (as
	// QuantizeQ8_K); it panics if len(x) is not a multiple of 256 or dst is
	// shorter than 292 bytes per block.
	QuantizeQ8K func(dst []byte, x []float32)
}

// Reference returns the portable reference implementation. It is a copy:
// no caller can swap the kernels the rest of the process runs.
func Reference() Kernels { return referenceKernels }

// Fast returns the implementation this build uses (see Kernels), as a
// copy.
func Fast() Kernels { return fastKernels }

var (
	referenceKernels = Kernels{Name: "reference", Dot: refDot, DotAMX: refDotAMX, DotRepack: refDotRepack,
		DotCols: refDotCols, DotColsAMX: refDotColsAMX, DotColsRepack: refDotColsRepack, DotPanel: refDotPanel,
		DotColsBatch: refDotColsBatch, QuantizeQ8K: checkedQ8K(quantizeQ8KRef)}
	fastKernels = Kernels{Name: fastName, Dot: fastDot, DotAMX: fastDotAMX, DotRepack: fastDotRepack,
		DotCols: fastDotCols, DotColsAMX: fastDotColsAMX, DotColsRepack: fastDotColsRepack, DotPanel: fastDotPanel,
		DotColsBatch: fastDotColsBatch, QuantizeQ8K: checkedQ8K(quantizeQ8K)}
)

func checkedQ8K(f func(dst []byte, x []float32)) func(dst []byte, x []float32) {
	return func(dst []byte, x []float32) {
		nb, err := checkRow(Q8_K, len(x), "dst", len(dst))
		if err != nil {
			panic(err)
		}
		f(dst[:292*nb], x)
	}
}

// blockKernel wraps a kernel over nb whole blocks into a checked DotFunc.
func blockKernel(t Type, f blockFunc) DotFunc {
	vt := t.VecDotType()
	bs, wsz, asz := t.BlockSize(), t.TypeSize(), vt.TypeSize()
	return func(w, act []byte, n int) float32 {
		if n < 0 || n%bs != 0 {
			panic(&LengthError{Type: t, N: n, Err: ErrRowLength})
		}
		nb := n / bs
		if len(w) < nb*wsz {
			panic(shortErr(t, n, "w", len(w), nb*wsz))
		}
		if len(act) < nb*asz {
			panic(shortErr(t, n, "act", len(act), nb*asz))
		}
		if nb == 0 {
			return 0
		}
		return f(w, act, nb)
	}
}

// blockFunc multiplies nb whole blocks of a weight type with nb blocks of
// its VecDotType (for F32, F16 and BF16, whose blocks are one value, nb
// values), unchecked.
type blockFunc func(w, a []byte, nb int) float32

// The row kernels of each implementation and order, unchecked.
var (
	refBlocks = map[Type]blockFunc{
		Q4_K: dotQ4_KRef, Q5_K: dotQ5_KRef, Q6_K: dotQ6_KRef, Q4_0: dotQ4_0Ref, Q4_1: dotQ4_1Ref,
		Q5_0: dotQ5_0Ref, Q5_1: dotQ5_1Ref, Q8_0: dotQ8_0Ref, F32: dotF32Ref, F16: dotF16Ref, BF16: dotBF16Ref,
	}
	fastBlocks = map[Type]blockFunc{
		Q4_K: dotQ4_K, Q5_K: dotQ5_K, Q6_K: dotQ6_K, Q4_0: dotQ4_0, Q4_1: dotQ4_1,
		Q5_0: dotQ5_0, Q5_1: dotQ5_1, Q8_0: dotQ8_0, F32: dotF32, F16: dotF16, BF16: dotBF16,
	}
	refAMXBlocks = map[Type]blockFunc{
		Q4_0: dotQ4_0AMXRef, Q4_K: dotQ4_KAMXRef, Q5_K: dotQ5_KAMXRef, Q6_K: dotQ6_KAMXRef, Q8_0: dotQ8_0AMXRef,
	}
	fastAMXBlocks = map[Type]blockFunc{
		Q4_0: dotQ4_0AMX, Q4_K: dotQ4_KAMX, Q5_K: dotQ5_KAMX, Q6_K: dotQ6_KAMX, Q8_0: dotQ8_0AMX,
	}
	refRepackBlocks  = map[Type]blockFunc{Q4_K: dotQ4_KRepackRef}
	fastRepackBlocks = map[Type]blockFunc{Q4_K: dotQ4_KRepack}
)

// withBlocks returns a copy of blocks with the kernels of over in place of
// its own.
func withBlocks(blocks, over map[Type]blockFunc) map[Type]blockFunc {
	m := make(map[Type]blockFunc, len(blocks))
	for t, f := range blocks {
		m[t] = f
	}
	for t, f := range over {
		m[t] = f
	}
	return m
}

// dotTable wraps every kernel of blocks into a checked DotFunc.
func dotTable(blocks map[Type]blockFunc) map[Type]DotFunc {
	m := make(map[Type]DotFunc, len(blocks))
	for t, f := range blocks {
		m[t] = blockKernel(t, f)
	}
	return m
}

var (
	refTable     = dotTable(refBlocks)
	fastTable    = dotTable(fastBlocks)
	refAMXTable  = dotTable(refAMXBlocks)
	fastAMXTable = dotTable(fastAMXBlocks)
	avx2Table    = dotTable(avx2Blocks)
	avx2AMXTable = dotTable(avx2AMXBlocks)
	// The repack order has AVX2 kernels only: Fast's are the AVX2 path.
	refRepackTable  = dotTable(refRepackBlocks)
	fastRepackTable = dotTable(fastRepackBlocks)
)

func refDot(t Type) DotFunc        { return refTable[t] }
func fastDot(t Type) DotFunc       { return fastTable[t] }
func refDotAMX(t Type) DotFunc     { return refAMXTable[t] }
func fastDotAMX(t Type) DotFunc    { return fastAMXTable[t] }
func avx2Dot(t Type) DotFunc       { return avx2Table[t] }
func avx2DotAMX(t Type) DotFunc    { return avx2AMXTable[t] }
func refDotRepack(t Type) DotFunc  { return refRepackTable[t] }
func fastDotRepack(t Type) DotFunc { return fastRepackTable[t] }

// DotForMatrix returns the fast row kernel for the rows of a matrix of type
// t with the given number of rows (ne[1] in ggml's terms) that llama.cpp
// multiplies with (not one it only looks rows up in), summing in the order
// llama.cpp's CPU backend uses for that matrix on this machine: the order
// of ggml's AMX buffer for a Q4_0, Q4_K, Q5_K, Q6_K or Q8_0 matrix whose
// row count is a multiple of 32 when AMXOrder() (ggml's sapphirerapids build
// moves such a matrix into that buffer); else, for a Q4_K matrix whose row
// count is a multiple of 8 when RepackOrder(), the order of ggml's
// CPU_REPACK buffer (q4_K_8x8, where ggml's AVX2 builds put such a matrix
// when AMX does not take it); the order of Kernels.Dot otherwise. Errors
// as DotFor.
func DotForMatrix(t Type, rows int) (DotFunc, error) {
	switch {
	case matrixAMX(t, rows):
		return fastDotAMX(t), nil
	case matrixRepack(t, rows):
		return fastDotRepack(t), nil
	}
	return DotFor(t)
}

// DotForExperts is DotForMatrix for the rows of one expert of a merged
// expert tensor ([cols, rows, experts], multiplied by ggml_mul_mat_id): the
// AMX buffer does not hold such tensors, CPU_REPACK does, so the order is
// the CPU_REPACK one where DotForMatrix's rule gives it and Kernels.Dot's
// otherwise. Errors as DotFor.
func DotForExperts(t Type, rows int) (DotFunc, error) {
	if matrixRepack(t, rows) {
		return fastDotRepack(t), nil
	}
	return DotFor(t)
}

// matrixAMX reports whether DotForMatrix and DotColsForMatrix pick ggml's
// AMX order for a matrix of type t with the given number of rows.
func matrixAMX(t Type, rows int) bool {
	return amxOrder && rows%32 == 0 && fastDotAMX(t) != nil
}

// matrixRepack reports whether a matrix of type t with the given number of
// rows that AMX does not take is in ggml's CPU_REPACK order.
func matrixRepack(t Type, rows int) bool {
	return repackOrder && rows%8 == 0 && !matrixAMX(t, rows) && fastDotRepack(t) != nil
}

// DotFor returns the fast row kernel for weight type t. It fails with an
// error wrapping ErrUnknownType for a type that has no dot product here
// (Q8_1 and Q8_K are activation types, not weight types).
func DotFor(t Type) (DotFunc, error) {
	if f := fastDot(t); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("quant: dot product for %v: %w", t, ErrUnknownType)
}

// DotRow returns the dot product of the row w of n weights of type t with act,
// n values encoded by QuantizeActivation(t, …). It fails with an error
// wrapping ErrUnknownType, ErrRowLength or ErrShortBuffer instead of
// panicking.
func DotRow(t Type, w, act []byte, n int) (float32, error) {
	f, err := DotFor(t)
	if err != nil {
		return 0, err
	}
	if err := checkMat(t, len(w), len(act), n, 1); err != nil {
		return 0, err
	}
	return f(w, act, n), nil
}

// MatVec sets dst[r] to the dot product of row r of the matrix w with act,
// for r in [r0, r1). w holds rows of n weights of type t back to back
// (t.RowSize(n) bytes each, at least r1 rows); act holds n values encoded by
// QuantizeActivation(t, …); dst must have len >= r1 (entries outside [r0, r1)
// are not touched), so workers can fill disjoint row ranges of one dst.
//
// It allocates nothing. It fails with an error wrapping ErrUnknownType,
// ErrRowLength or ErrShortBuffer (r0 > r1 or r0 < 0 is ErrShortBuffer too);
// dst is then untouched.
func MatVec(dst []float32, t Type, w, act []byte, n, r0, r1 int) error {
	f, err := DotFor(t)
	if err != nil {
		return err
	}
	if r0 < 0 || r1 < r0 || len(dst) < r1 {
		return &LengthError{Type: t, N: n, What: "dst rows", Have: len(dst), Want: r1, Err: ErrShortBuffer}
	}
	if err := checkMat(t, len(w), len(act), n, r1); err != nil {
		return err
	}
	rs := rowSize(t, n)
	for r := r0; r < r1; r++ {
		dst[r] = f(w[r*rs:(r+1)*rs], act, n)
	}
	return nil
}

// checkMat checks rows rows of n weights of type t against lenW bytes and an
// activation of lenAct bytes.
func checkMat(t Type, lenW, lenAct, n, rows int) error {
	rs, err := t.RowSize(n)
	if err != nil {
		return err
	}
	if lenW < rs*rows {
		return shortErr(t, n, "w", lenW, rs*rows)
	}
	as := rowSize(t.VecDotType(), n)
	if lenAct < as {
		return shortErr(t, n, "act", lenAct, as)
	}
	return nil
}

// MatMul multiplies rows [r0, r1) of the matrix w with nTok activation
// vectors, reading each weight row once for the whole batch (the prefill
// shape). acts holds the nTok activations back to back, each
// ActivationSize(t, n) bytes; dst is [nTok][m]float32 row-major with
// m = len(dst)/nTok, and dst[tok*m + r] receives row r times activation tok.
// m must be >= r1. Entries outside [r0, r1) are not touched.
//
// Each result equals the one MatVec gives (see DotColsFunc). It allocates
// nothing and fails like MatVec (nTok < 1 is ErrShortBuffer).
func MatMul(dst []float32, t Type, w, acts []byte, n, nTok, r0, r1 int) error {
	f, err := dotColsFor(t)
	if err != nil {
		return err
	}
	if nTok < 1 {
		return &LengthError{Type: t, N: n, What: "tokens", Have: nTok, Want: 1, Err: ErrShortBuffer}
	}
	m := len(dst) / nTok
	if r0 < 0 || r1 < r0 || m < r1 {
		return &LengthError{Type: t, N: n, What: "dst rows", Have: m, Want: r1, Err: ErrShortBuffer}
	}
	if err := checkMat(t, len(w), len(acts), n, r1); err != nil {
		return err
	}
	as := rowSize(t.VecDotType(), n)
	if len(acts) < as*nTok {
		return shortErr(t, n, "acts", len(acts), as*nTok)
	}
	rs := rowSize(t, n)
	for r := r0; r < r1; r++ {
		f(dst[r:], m, w[r*rs:(r+1)*rs], acts, n, nTok)
	}
	return nil
}
