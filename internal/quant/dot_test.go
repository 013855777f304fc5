package quant_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/internal/quant/quanttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dequantDot is the float64 dot product of the dequantized row and
// activation, and Σ|w·a| for error bounds.
func dequantDot(t *testing.T, typ quant.Type, w, act []byte, n int) (dot, absSum float64) {
	x, y := make([]float32, n), make([]float32, n)
	require.NoError(t, quant.Dequantize(typ, x, w))
	require.NoError(t, quant.Dequantize(typ.VecDotType(), y, act))
	for i := range x {
		p := float64(x[i]) * float64(y[i])
		dot += p
		absSum += math.Abs(p)
	}
	if typ.VecDotType() == quant.Q8_1 {
		// ggml's Q4_1/Q5_1 dot products take Σ m·d_a·q_a from the
		// activation's s field (d_a·Σq_a rounded to f16): swap the terms.
		wsz := typ.TypeSize()
		for b := range n / 32 {
			m := float64(f16(w[b*wsz+2:]))
			da, sa := float64(f16(act[36*b:])), float64(f16(act[36*b+2:]))
			var sumQ float64
			for _, q := range act[36*b+4 : 36*b+36] {
				sumQ += float64(int8(q))
			}
			dot += m*sa - m*da*sumQ
			absSum += math.Abs(m * sa)
		}
	}
	return dot, absSum
}

func f16(b []byte) float32 { return quant.F16ToF32(binary.LittleEndian.Uint16(b)) }

// TestDotMatchesDequantized checks every kernel against the float64 dot
// product of the dequantized operands: the integer block sums are exact, so
// the only error is the float32 rounding of scales and the accumulation,
// bounded here by 1e-5·Σ|w·a| (n ≤ 4352 terms of relative error ≤ 2^-24
// each, plus the per-block scale products).
func TestDotMatchesDequantized(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, typ := range quanttest.WeightTypes {
		for _, n := range quanttest.Lengths(typ) {
			for variant := range 2 {
				w, act := quanttest.Inputs(typ, n, variant, r)
				want, absSum := dequantDot(t, typ, w, act, n)
				got, err := quant.DotRow(typ, w, act, n)
				require.NoError(t, err)
				assert.InDelta(t, want, float64(got), 1e-5*absSum+1e-30, "%v n=%d variant %d", typ, n, variant)
			}
		}
	}
}

func TestDotQ8_0Hand(t *testing.T) {
	w := make([]byte, 34)
	a := make([]byte, 34)
	binary.LittleEndian.PutUint16(w, 0x3800) // 0.5
	binary.LittleEndian.PutUint16(a, 0x4000) // 2
	w[2], a[2] = 3, 5                        // 15
	w[3], a[3] = 0x80, 0x80                  // (-128)·(-128) = 16384
	w[33], a[33] = 0xFF, 7                   // -7
	got, err := quant.DotRow(quant.Q8_0, w, a, 32)
	require.NoError(t, err)
	assert.Equal(t, float32(16392), got)
}

func TestDotQ4_KHand(t *testing.T) {
	w := make([]byte, 144)
	binary.LittleEndian.PutUint16(w[0:], 0x3C00) // d = 1
	binary.LittleEndian.PutUint16(w[2:], 0x3800) // dmin = 0.5
	w[4], w[8] = 2, 3                            // sub-block 0: scale 2, min 3
	w[16] = 0x0A                                 // weight 0: q = 10 → 2*10 - 0.5*3 = 18.5
	a := make([]byte, 292)
	binary.LittleEndian.PutUint32(a, math.Float32bits(0.25))
	a[4] = 4                                  // activation 0 = 1
	a[5] = 0xFC                               // activation 1 = -1 (weight 1: q=0 → -1.5)
	binary.LittleEndian.PutUint16(a[260:], 0) // bsums of the first 16: 4 + (-4) = 0
	// Σ w·a = 18.5·1 + (-1.5)·(-1) = 20.
	got, err := quant.DotRow(quant.Q4_K, w, a, 256)
	require.NoError(t, err)
	assert.Equal(t, float32(20), got)
}

func TestQuantizeActivationQ8_0RoundsHalfEven(t *testing.T) {
	x := make([]float32, 32)
	x[0], x[1], x[2] = 127, 2.5, -3.5 // amax 127: scale 1, ties stay ties
	act := make([]byte, 34)
	require.NoError(t, quant.QuantizeActivation(quant.Q4_0, act, x))
	assert.Equal(t, []int8{127, 2, -4}, []int8{int8(act[2]), int8(act[3]), int8(act[4])})
	file := make([]byte, 34)
	require.NoError(t, quant.QuantizeQ8_0(file, x))
	assert.Equal(t, []int8{127, 3, -4}, []int8{int8(file[2]), int8(file[3]), int8(file[4])}, "the file quantizer rounds half away from zero")
}

func TestQuantizeActivationTypes(t *testing.T) {
	x := gaussRow(512, 3)
	for _, typ := range quanttest.WeightTypes {
		size, err := quant.ActivationSize(typ, 512)
		require.NoError(t, err)
		act := make([]byte, size)
		require.NoError(t, quant.QuantizeActivation(typ, act, x), typ.String())
	}
	_, err := quant.ActivationSize(quant.Q8_K, 256)
	require.ErrorIs(t, err, quant.ErrUnknownType)
	require.ErrorIs(t, quant.QuantizeActivation(quant.Q4_K, make([]byte, 10), x), quant.ErrShortBuffer)
}

func TestMatVec(t *testing.T) {
	const rows, n = 5, 512
	typ := quant.Q4_K
	rs, _ := typ.RowSize(n)
	w := make([]byte, rows*rs)
	for r := range rows {
		require.NoError(t, quant.Quantize(typ, w[r*rs:(r+1)*rs], gaussRow(n, uint64(r))))
	}
	as, _ := quant.ActivationSize(typ, n)
	act := make([]byte, as)
	require.NoError(t, quant.QuantizeActivation(typ, act, gaussRow(n, 99)))

	dst := []float32{-1, -1, -1, -1, -1, -1}
	require.NoError(t, quant.MatVec(dst, typ, w, act, n, 1, 4))
	assert.Equal(t, float32(-1), dst[0])
	assert.Equal(t, float32(-1), dst[4])
	assert.Equal(t, float32(-1), dst[5])
	for r := 1; r < 4; r++ {
		want, err := quant.DotRow(typ, w[r*rs:(r+1)*rs], act, n)
		require.NoError(t, err)
		assert.Equal(t, want, dst[r])
	}
	allocs := testing.AllocsPerRun(10, func() { _ = quant.MatVec(dst, typ, w, act, n, 0, rows) })
	assert.Zero(t, allocs)

	require.ErrorIs(t, quant.MatVec(dst[:3], typ, w, act, n, 0, 4), quant.ErrShortBuffer)
	require.ErrorIs(t, quant.MatVec(dst, typ, w[:rs*3], act, n, 0, 4), quant.ErrShortBuffer)
	require.ErrorIs(t, quant.MatVec(dst, typ, w, act[:10], n, 0, 4), quant.ErrShortBuffer)
	require.ErrorIs(t, quant.MatVec(dst, typ, w, act, 300, 0, 1), quant.ErrRowLength)
	require.ErrorIs(t, quant.MatVec(dst, quant.Q8_K, w, act, n, 0, 1), quant.ErrUnknownType)
	require.ErrorIs(t, quant.MatVec(dst, typ, w, act, n, 3, 2), quant.ErrShortBuffer)
}

func TestDotFuncPanicsOnShortBuffers(t *testing.T) {
	f, err := quant.DotFor(quant.Q6_K)
	require.NoError(t, err)
	assert.Panics(t, func() { f(make([]byte, 209), make([]byte, 292), 256) })
	assert.Panics(t, func() { f(make([]byte, 210), make([]byte, 291), 256) })
	assert.Panics(t, func() { f(make([]byte, 210), make([]byte, 292), 255) })
	_, err = quant.DotFor(quant.Type(1234))
	require.ErrorIs(t, err, quant.ErrUnknownType)
}

func TestMatMulEqualsMatVec(t *testing.T) {
	const rows, n, nTok = 4, 512, 3
	r := rand.New(rand.NewPCG(8, 8))
	for _, typ := range quanttest.WeightTypes {
		rs, _ := typ.RowSize(n)
		as, _ := quant.ActivationSize(typ, n)
		w := make([]byte, 0, rows*rs)
		for range rows {
			row, _ := quanttest.Inputs(typ, n, 0, r)
			w = append(w, row...)
		}
		acts := make([]byte, 0, nTok*as)
		for range nTok {
			_, a := quanttest.Inputs(typ, n, 0, r)
			acts = append(acts, a...)
		}
		dst := make([]float32, nTok*rows)
		require.NoError(t, quant.MatMul(dst, typ, w, acts, n, nTok, 0, rows), typ.String())
		for tok := range nTok {
			want := make([]float32, rows)
			require.NoError(t, quant.MatVec(want, typ, w, acts[tok*as:(tok+1)*as], n, 0, rows))
			assert.Equal(t, want, dst[tok*rows:(tok+1)*rows], "%v token %d", typ, tok)
		}
		assert.Zero(t, testing.AllocsPerRun(5, func() { _ = quant.MatMul(dst, typ, w, acts, n, nTok, 1, 3) }))
		require.ErrorIs(t, quant.MatMul(dst, typ, w, acts[:len(acts)-1], n, nTok, 0, rows), quant.ErrShortBuffer)
		require.ErrorIs(t, quant.MatMul(dst, typ, w, acts, n, 0, 0, rows), quant.ErrShortBuffer)
		require.ErrorIs(t, quant.MatMul(dst[:nTok*rows-1], typ, w, acts, n, nTok, 0, rows), quant.ErrShortBuffer)
	}
}
