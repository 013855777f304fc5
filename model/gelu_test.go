package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// TestTanhfMatchesGlibc checks tanhf bit for bit against glibc's tanhf
// (2.36, x86-64) in testdata/tanhf_glibc.txt: inputs where Go's
// float32(math.Tanh) rounds differently, then a spread over all magnitudes
// and signs (and 0, ±1, ±22, ±inf). The port was also checked against
// glibc on all 2^32 inputs once (a hash per 2^24 inputs, NaN payloads
// aside).
func TestTanhfMatchesGlibc(t *testing.T) {
	cases, goDiffers := 0, 0
	for _, row := range glibcTable(t, "testdata/tanhf_glibc.txt", 2) {
		x, want := row[0], row[1]
		xf := math.Float32frombits(x)
		assert.Equal(t, want, math.Float32bits(tanhf(xf)), "tanhf(%g) (bits %08x)", xf, x)
		if math.Float32bits(float32(math.Tanh(float64(xf)))) != want {
			goDiffers++
		}
		cases++
	}
	require.Greater(t, cases, 2000)
	assert.Greater(t, goDiffers, 1000, "the golden file should hold inputs where math.Tanh rounds differently")
	assert.True(t, math.IsNaN(float64(tanhf(float32(math.NaN())))))
}

// geluTableSHA256 is the SHA-256 of llama.cpp's ggml_table_gelu_f16 (65536
// little-endian f16, read from the npm prebuilt v0.5.0's
// libggml-cpu-haswell.so after ggml_cpu_init); the parity suite checks the
// reference's table against the same digest (TestGELUTable there).
const geluTableSHA256 = "5eceda6f287dec9dc0bcfa24516d6744a031a5c52d1984688b4558aeb1daf909"

// The GELU table is llama.cpp's, byte for byte.
func TestGELUTableIsGGMLs(t *testing.T) {
	var b [1 << 17]byte
	for i, v := range geluF16() {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	sum := sha256.Sum256(b[:])
	assert.Equal(t, geluTableSHA256, hex.EncodeToString(sum[:]))
}

// geglu follows ggml_vec_geglu_f32: the table between -10 and 10, 0 at or
// below -10, the gate itself at or above 10; always within f16 rounding of
// the tanh GELU.
func TestGeglu(t *testing.T) {
	gate := []float32{-11, -10, -9.99, -1, -0.5, 0, 1e-3, 0.5, 1, 3, 9.99, 10, 12}
	up := make([]float32, len(gate))
	for i := range up {
		up[i] = 1.5
	}
	h := make([]float32, len(gate))
	geglu(h, gate, up)
	assert.Equal(t, float32(0), h[0])
	assert.Equal(t, float32(0), h[1])
	assert.Equal(t, float32(15), h[11])
	assert.Equal(t, float32(18), h[12])
	for i, g := range gate[2:11] {
		x := float64(g)
		want := 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))) * 1.5
		assert.InDelta(t, want, float64(h[i+2]), 2e-3*math.Max(1, math.Abs(want)), "gelu(%g)", g)
		// The gate goes through f16: values an f16 apart share a result.
		assert.Equal(t, f16Table[geluF16()[quant.F32ToF16(g)]]*1.5, h[i+2])
	}
	// In place, as the forward calls it.
	geglu(gate, gate, up)
	assert.Equal(t, h, gate)
}

// softcap is cap·tanh(x/cap), each op rounded to f32.
func TestSoftcap(t *testing.T) {
	x := []float32{-1000, -30, -1, 0, 0.5, 29, 1e6}
	softcap(x, 30)
	assert.Equal(t, float32(-30), x[0])
	assert.Equal(t, float32(0), x[3])
	assert.Equal(t, float32(30), x[6])
	assert.Equal(t, tanhf(float32(-1)*(1/float32(30)))*30, x[2])
	for _, v := range x {
		assert.LessOrEqual(t, math.Abs(float64(v)), 30.0)
	}
}
