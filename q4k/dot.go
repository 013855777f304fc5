package q4k

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
	// QuantizeQ8K encodes len(x)/256 whole Q8_K blocks into dst (as
	// QuantizeQ8_K); it panics if len(x) is not a multiple of 256 or dst is
	// shorter than 292 bytes per block.
	QuantizeQ8K func(dst []byte, x []float32)
}

// Reference is the portable reference implementation.
var Reference = Kernels{Name: "reference", Dot: refDot, DotAMX: refDotAMX, QuantizeQ8K: checkedQ8K(quantizeQ8KRef)}

// Fast is the implementation this build uses (see Kernels).
var Fast = Kernels{Name: fastName, Dot: fastDot, DotAMX: fastDotAMX, QuantizeQ8K: checkedQ8K(quantizeQ8K)}

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
func blockKernel(t Type, f func(w, a []byte, nb int) float32) DotFunc {
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

func dotTable(q4K, q5K, q6K, q40, q41, q50, q51, q80, f32, f16, bf16 func(w, a []byte, nb int) float32) map[Type]DotFunc {
	return map[Type]DotFunc{
		Q4_K: blockKernel(Q4_K, q4K),
		Q5_K: blockKernel(Q5_K, q5K),
		Q6_K: blockKernel(Q6_K, q6K),
		Q4_0: blockKernel(Q4_0, q40),
		Q4_1: blockKernel(Q4_1, q41),
		Q5_0: blockKernel(Q5_0, q50),
		Q5_1: blockKernel(Q5_1, q51),
		Q8_0: blockKernel(Q8_0, q80),
		F32:  blockKernel(F32, f32),
		F16:  blockKernel(F16, f16),
		BF16: blockKernel(BF16, bf16),
	}
}

var (
	refTable = dotTable(dotQ4_KRef, dotQ5_KRef, dotQ6_KRef, dotQ4_0Ref, dotQ4_1Ref, dotQ5_0Ref, dotQ5_1Ref,
		dotQ8_0Ref, dotF32Ref, dotF16Ref, dotBF16Ref)
	fastTable = dotTable(dotQ4_K, dotQ5_K, dotQ6_K, dotQ4_0, dotQ4_1, dotQ5_0, dotQ5_1,
		dotQ8_0, dotF32, dotF16, dotBF16)
)

func refDot(t Type) DotFunc  { return refTable[t] }
func fastDot(t Type) DotFunc { return fastTable[t] }

var (
	refAMXTable = map[Type]DotFunc{
		Q4_0: blockKernel(Q4_0, dotQ4_0AMXRef),
		Q4_K: blockKernel(Q4_K, dotQ4_KAMXRef),
		Q5_K: blockKernel(Q5_K, dotQ5_KAMXRef),
		Q6_K: blockKernel(Q6_K, dotQ6_KAMXRef),
		Q8_0: blockKernel(Q8_0, dotQ8_0AMXRef),
	}
	fastAMXTable = map[Type]DotFunc{
		Q4_0: blockKernel(Q4_0, dotQ4_0AMX),
		Q4_K: blockKernel(Q4_K, dotQ4_KAMX),
		Q5_K: blockKernel(Q5_K, dotQ5_KAMX),
		Q6_K: blockKernel(Q6_K, dotQ6_KAMX),
		Q8_0: blockKernel(Q8_0, dotQ8_0AMX),
	}
)

func refDotAMX(t Type) DotFunc  { return refAMXTable[t] }
func fastDotAMX(t Type) DotFunc { return fastAMXTable[t] }

// DotForMatrix returns the fast row kernel for the rows of a matrix of type
// t with the given number of rows (ne[1] in ggml's terms) that llama.cpp
// multiplies with (not one it only looks rows up in), summing in the order
// llama.cpp's CPU backend uses for that matrix on this machine: the order
// of ggml's AMX buffer for a Q4_0, Q4_K, Q5_K, Q6_K or Q8_0 matrix whose
// row count is a multiple of 32 when AMXOrder() (ggml's sapphirerapids build
// moves such a matrix into that buffer), the order of Kernels.Dot
// otherwise. Errors as DotFor.
func DotForMatrix(t Type, rows int) (DotFunc, error) {
	if amxOrder && rows%32 == 0 {
		if f := fastDotAMX(t); f != nil {
			return f, nil
		}
	}
	return DotFor(t)
}

// DotFor returns the fast row kernel for weight type t. It fails with an
// error wrapping ErrUnknownType for a type that has no dot product here
// (Q8_1 and Q8_K are activation types, not weight types).
func DotFor(t Type) (DotFunc, error) {
	if f := fastDot(t); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("q4k: dot product for %v: %w", t, ErrUnknownType)
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
// Each result equals the one MatVec gives. It allocates nothing and fails
// like MatVec (nTok < 1 is ErrShortBuffer).
func MatMul(dst []float32, t Type, w, acts []byte, n, nTok, r0, r1 int) error {
	f, err := DotFor(t)
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
		row := w[r*rs : (r+1)*rs]
		for tok := range nTok {
			dst[tok*m+r] = f(row, acts[tok*as:(tok+1)*as], n)
		}
	}
	return nil
}
