package ref_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

func randRow(seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func TestTypeInfo(t *testing.T) {
	l := reftest.Lib(t)
	for _, tc := range []struct {
		typ  uint32
		want ref.TypeInfo
	}{
		{ref.TypeF32, ref.TypeInfo{Name: "f32", BlockSize: 1, TypeSize: 4}},
		{ref.TypeF16, ref.TypeInfo{Name: "f16", BlockSize: 1, TypeSize: 2}},
		{ref.TypeBF16, ref.TypeInfo{Name: "bf16", BlockSize: 1, TypeSize: 2}},
		{ref.TypeQ4_0, ref.TypeInfo{Name: "q4_0", BlockSize: 32, TypeSize: 18, Quantized: true}},
		{ref.TypeQ5_0, ref.TypeInfo{Name: "q5_0", BlockSize: 32, TypeSize: 22, Quantized: true}},
		{ref.TypeQ8_0, ref.TypeInfo{Name: "q8_0", BlockSize: 32, TypeSize: 34, Quantized: true}},
		{ref.TypeQ4_K, ref.TypeInfo{Name: "q4_K", BlockSize: 256, TypeSize: 144, Quantized: true}},
		{ref.TypeQ5_K, ref.TypeInfo{Name: "q5_K", BlockSize: 256, TypeSize: 176, Quantized: true}},
		{ref.TypeQ6_K, ref.TypeInfo{Name: "q6_K", BlockSize: 256, TypeSize: 210, Quantized: true}},
		{ref.TypeQ8_K, ref.TypeInfo{Name: "q8_K", BlockSize: 256, TypeSize: 292, Quantized: true}},
	} {
		got, err := l.TypeInfo(tc.typ)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	_, err := l.TypeInfo(4) // Q4_2, removed from ggml
	assert.ErrorIs(t, err, ref.ErrUnsupportedType)
	_, err = l.TypeInfo(1000)
	assert.ErrorIs(t, err, ref.ErrUnsupportedType)
}

// Round trips through ggml's codecs stay within each type's error bound.
func TestQuantizeDequantizeRoundTrip(t *testing.T) {
	l := reftest.Lib(t)
	const n = 512
	src := randRow(1, n)
	for _, tc := range []struct {
		typ    uint32
		maxRel float64 // max |x-y| relative to max |x|
	}{
		{ref.TypeF32, 0},
		{ref.TypeF16, 1e-3},
		{ref.TypeBF16, 1e-2},
		{ref.TypeQ8_0, 1e-2},
		{ref.TypeQ8_K, 1e-2},
		{ref.TypeQ6_K, 4e-2},
		{ref.TypeQ5_0, 8e-2},
		{ref.TypeQ5_K, 8e-2},
		{ref.TypeQ4_0, 0.16},
		{ref.TypeQ4_K, 0.16},
	} {
		info, err := l.TypeInfo(tc.typ)
		require.NoError(t, err)
		t.Run(info.Name, func(t *testing.T) {
			q, err := l.QuantizeRow(tc.typ, src)
			require.NoError(t, err)
			require.Len(t, q, info.RowSize(n))
			y, err := l.Dequantize(tc.typ, q, n)
			require.NoError(t, err)
			var maxAbs, maxErr float64
			for i := range src {
				maxAbs = math.Max(maxAbs, math.Abs(float64(src[i])))
				maxErr = math.Max(maxErr, math.Abs(float64(src[i]-y[i])))
			}
			assert.LessOrEqual(t, maxErr, tc.maxRel*maxAbs)
		})
	}
}

func TestCodecErrors(t *testing.T) {
	l := reftest.Lib(t)
	_, err := l.Dequantize(ref.TypeQ4_K, make([]byte, 144), 255)
	assert.ErrorIs(t, err, ref.ErrShape)
	_, err = l.Dequantize(ref.TypeQ4_K, make([]byte, 143), 256)
	assert.ErrorIs(t, err, ref.ErrShape)
	_, err = l.QuantizeRow(ref.TypeQ8_0, make([]float32, 33))
	assert.ErrorIs(t, err, ref.ErrShape)
	_, err = l.QuantizeRows(ref.TypeQ8_0, make([]float32, 96), 64)
	assert.ErrorIs(t, err, ref.ErrShape)
	_, err = l.QuantizeRow(16, make([]float32, 256)) // IQ2_XXS needs an importance matrix
	assert.ErrorIs(t, err, ref.ErrUnsupportedType)
}

// QuantizeRows of several rows equals the rows quantized one at a time.
func TestQuantizeRowsIsPerRow(t *testing.T) {
	l := reftest.Lib(t)
	src := randRow(2, 3*256)
	all, err := l.QuantizeRows(ref.TypeQ4_K, src, 256)
	require.NoError(t, err)
	for r := 0; r < 3; r++ {
		one, err := l.QuantizeRow(ref.TypeQ4_K, src[r*256:(r+1)*256])
		require.NoError(t, err)
		assert.Equal(t, one, all[r*144:(r+1)*144], "row %d", r)
	}
}

// The CPU backend's dot product agrees with the dot product of the
// dequantized rows to float32 rounding.
func TestVecDot(t *testing.T) {
	l := reftest.Lib(t)
	if l.CPUBackend() == "" {
		t.Fatal("no CPU backend library found mapped in the process")
	}
	t.Log("CPU backend:", l.CPUBackend())
	const n = 1024
	w, a := randRow(3, n), randRow(4, n)
	for _, typ := range []uint32{ref.TypeQ4_K, ref.TypeQ5_K, ref.TypeQ6_K, ref.TypeQ4_0, ref.TypeQ5_0, ref.TypeQ8_0, ref.TypeF16} {
		vt, err := l.VecDotType(typ)
		require.NoError(t, err)
		x, err := l.QuantizeRow(typ, w)
		require.NoError(t, err)
		y, err := l.QuantizeRowCPU(vt, a)
		require.NoError(t, err)
		got, err := l.VecDot(typ, n, x, y)
		require.NoError(t, err)
		xf, err := l.Dequantize(typ, x, n)
		require.NoError(t, err)
		yf, err := l.Dequantize(vt, y, n)
		require.NoError(t, err)
		var want float64
		for i := range xf {
			want += float64(xf[i]) * float64(yf[i])
		}
		assert.InDelta(t, want, got, 1e-3*math.Max(1, math.Abs(want)), "type %d · %d", typ, vt)
	}
	want := map[uint32]uint32{ref.TypeQ4_K: ref.TypeQ8_K, ref.TypeQ6_K: ref.TypeQ8_K, ref.TypeQ4_0: ref.TypeQ8_0, ref.TypeF16: ref.TypeF16}
	for typ, vt := range want {
		got, err := l.VecDotType(typ)
		require.NoError(t, err)
		assert.Equal(t, vt, got)
	}
}
