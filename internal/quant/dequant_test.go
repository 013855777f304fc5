package quant_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDequantizeQ4_0Hand(t *testing.T) {
	b := make([]byte, 18)
	binary.LittleEndian.PutUint16(b, 0x3800) // d = 0.5
	b[2] = 0x9F                              // w0: 15-8 = 7, w16: 9-8 = 1
	b[3] = 0x08                              // w1: 0, w17: -8
	y := make([]float32, 32)
	require.NoError(t, quant.Dequantize(quant.Q4_0, y, b))
	assert.Equal(t, float32(3.5), y[0])
	assert.Equal(t, float32(0.5), y[16])
	assert.Equal(t, float32(0), y[1])
	assert.Equal(t, float32(-4), y[17])
	assert.Equal(t, float32(-4), y[2]) // zero byte: 0-8
}

func TestDequantizeQ5_0Hand(t *testing.T) {
	b := make([]byte, 22)
	binary.LittleEndian.PutUint16(b, 0x3C00)           // d = 1
	binary.LittleEndian.PutUint32(b[2:], 1|1<<16|1<<3) // 5th bit of w0, w16, w3
	b[6] = 0x21                                        // w0 = 1|16 = 17, w16 = 2|16 = 18
	y := make([]float32, 32)
	require.NoError(t, quant.Dequantize(quant.Q5_0, y, b))
	assert.Equal(t, []float32{1, 2, -16}, []float32{y[0], y[16], y[1]})
	assert.Equal(t, float32(0), y[3]) // 0|16 - 16
}

func TestDequantizeQ8_0Hand(t *testing.T) {
	b := make([]byte, 34)
	binary.LittleEndian.PutUint16(b, 0x4000) // d = 2
	b[2], b[3], b[33] = 0x80, 0x7F, 0xFF     // -128, 127, -1
	y := make([]float32, 32)
	require.NoError(t, quant.Dequantize(quant.Q8_0, y, b))
	assert.Equal(t, []float32{-256, 254, -2}, []float32{y[0], y[1], y[31]})
}

func TestDequantizeQ4_KHand(t *testing.T) {
	b := make([]byte, 144)
	binary.LittleEndian.PutUint16(b[0:], 0x3C00) // d = 1
	binary.LittleEndian.PutUint16(b[2:], 0x3800) // dmin = 0.5
	sc := b[4:16]
	sc[0], sc[4] = 2, 4 // sub-block 0: scale 2, min 4
	// sub-block 5: scale = sc[9]&15 | (sc[1]>>6)<<4 = 3|16 = 19,
	//              min   = sc[9]>>4 | (sc[5]>>6)<<4 = 7|32 = 39.
	sc[9], sc[1], sc[5] = 0x73, 0x40, 0x80
	qs := b[16:]
	qs[0] = 0x5A    // sub-block 0 w0 = 10, sub-block 1 w0 = 5
	qs[64+1] = 0xC0 // sub-block 5 (high nibbles of run 2) w1 = 12
	y := make([]float32, 256)
	require.NoError(t, quant.Dequantize(quant.Q4_K, y, b))
	assert.Equal(t, float32(2*10-0.5*4), y[0])
	assert.Equal(t, float32(0), y[32]) // sub-block 1: scale 0, min 0
	assert.Equal(t, float32(19*12-0.5*39), y[5*32+1])
}

func TestDequantizeQ6_KHand(t *testing.T) {
	b := make([]byte, 210)
	binary.LittleEndian.PutUint16(b[208:], 0x3800) // d = 0.5
	b[192], b[194], b[199] = 4, 0xFE, 3            // scales: sub 0 = 4, sub 2 = -2, sub 7 = 3
	b[0] = 0x3F                                    // w0 low 4 = 15, w64 low 4 = 3
	b[128] = 0x02 | 0x01<<4                        // qh: w0 high 2 = 2, w64 high 2 = 1
	y := make([]float32, 256)
	require.NoError(t, quant.Dequantize(quant.Q6_K, y, b))
	assert.Equal(t, float32(0.5*4*(15|2<<4-32)), y[0])
	assert.Equal(t, float32(0.5*-2*(0-32)), y[32]) // sub 2, q = 0
	assert.Equal(t, float32(0), y[16])             // sub 1 has scale 0
	// w64 is in sub-block 4 (scale 0); w112 is sub-block 7: q = 0 - 32.
	assert.Equal(t, float32(0.5*3*-32), y[112])
}

func TestDequantizeFloats(t *testing.T) {
	x := []float32{1, -2.5, 0.1, float32(math.Inf(-1))}
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16} {
		buf := make([]byte, 16)
		require.NoError(t, quant.Quantize(typ, buf, x))
		y := make([]float32, 4)
		require.NoError(t, quant.Dequantize(typ, y, buf))
		assert.Equal(t, x[:2], y[:2], typ.String())
		assert.InEpsilon(t, 0.1, y[2], 0.01, typ.String())
		assert.True(t, math.IsInf(float64(y[3]), -1))
	}
}

func TestDequantizeErrors(t *testing.T) {
	y := make([]float32, 256)
	err := quant.Dequantize(quant.Q4_K, y, make([]byte, 143))
	require.ErrorIs(t, err, quant.ErrShortBuffer)
	assert.Contains(t, err.Error(), "src has 143, needs 144")
	require.ErrorIs(t, quant.Dequantize(quant.Q4_K, y[:100], make([]byte, 144)), quant.ErrRowLength)
	require.ErrorIs(t, quant.Dequantize(quant.Type(99), y, nil), quant.ErrUnknownType)
}

// gaussRow returns n normal values with a few outliers, seeded.
func gaussRow(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if r.IntN(64) == 0 {
			x[i] *= 6
		}
	}
	return x
}

func TestQuantizeRoundTripRMSE(t *testing.T) {
	// Bounds on RMSE/std of quantize→dequantize for normal data with 1/64
	// outliers at 6x; measured: q8_0 0.0077, q8_K 0.0161, q6_K 0.0232,
	// q5_K 0.0431, q5_0 0.0611, q4_K 0.0852, f16 0.0002, bf16 0.0017.
	tests := []struct {
		typ   quant.Type
		bound float64
	}{
		{quant.Q8_0, 0.009}, {quant.Q8_K, 0.019}, {quant.Q6_K, 0.027}, {quant.Q5_K, 0.05},
		{quant.Q5_0, 0.07}, {quant.Q4_K, 0.1}, {quant.Q4_0, 0.15}, {quant.Q4_1, 0.15}, {quant.Q5_1, 0.07},
		{quant.Q8_1, 0.009}, {quant.F16, 0.001}, {quant.BF16, 0.003},
		{quant.F32, 0},
	}
	const n = 256 * 32
	x := gaussRow(n, 1)
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	std := math.Sqrt(ss / n)
	for _, tc := range tests {
		t.Run(tc.typ.String(), func(t *testing.T) {
			sz, err := tc.typ.RowSize(n)
			require.NoError(t, err)
			buf := make([]byte, sz+8)
			for i := range buf {
				buf[i] = 0xA5
			}
			require.NoError(t, quant.Quantize(tc.typ, buf, x))
			for _, g := range buf[sz:] {
				require.Equal(t, byte(0xA5), g, "guard overwritten")
			}
			y := make([]float32, n)
			require.NoError(t, quant.Dequantize(tc.typ, y, buf))
			var se float64
			for i := range x {
				d := float64(x[i] - y[i])
				se += d * d
			}
			rel := math.Sqrt(se/n) / std
			t.Logf("%v: rmse/std = %.5f", tc.typ, rel)
			assert.LessOrEqual(t, rel, tc.bound)
		})
	}
}

func TestQuantizeZeroRows(t *testing.T) {
	x := make([]float32, 256)
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_1, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_K} {
		sz, _ := typ.RowSize(256)
		buf := make([]byte, sz)
		require.NoError(t, quant.Quantize(typ, buf, x), typ.String())
		y := make([]float32, 256)
		for i := range y {
			y[i] = 1
		}
		require.NoError(t, quant.Dequantize(typ, y, buf))
		for _, v := range y {
			require.Zero(t, v, typ.String())
		}
	}
}

func TestQ8_KBlockContents(t *testing.T) {
	x := make([]float32, 256)
	for i := range x {
		x[i] = float32(i%16) - 7.5
	}
	x[40] = -10 // the first value of largest magnitude is negative: d = 10/127
	buf := make([]byte, 292)
	require.NoError(t, quant.QuantizeQ8_K(buf, x))
	d := math.Float32frombits(binary.LittleEndian.Uint32(buf))
	assert.InEpsilon(t, 10.0/127, d, 1e-6)
	assert.Equal(t, int8(-127), int8(buf[4+40]))
	for j := range 16 {
		sum := 0
		for _, q := range buf[4+16*j : 4+16*j+16] {
			sum += int(int8(q))
		}
		assert.Equal(t, int16(sum), int16(binary.LittleEndian.Uint16(buf[260+2*j:])), "bsum %d", j)
	}
}

func TestQuantizeErrors(t *testing.T) {
	x := make([]float32, 256)
	require.ErrorIs(t, quant.Quantize(quant.Q8_K+100, make([]byte, 144), x), quant.ErrUnknownType)
	require.ErrorIs(t, quant.Quantize(quant.Type(77), make([]byte, 144), x), quant.ErrUnknownType)
	require.ErrorIs(t, quant.Quantize(quant.Q4_K, make([]byte, 100), x), quant.ErrShortBuffer)
	require.ErrorIs(t, quant.Quantize(quant.Q6_K, make([]byte, 1000), x[:255]), quant.ErrRowLength)
}
