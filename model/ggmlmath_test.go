package model

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
)

var widths = []simd{{lanes: 8}, {lanes: 16}}

// ggml_v_expf is within a few ulps of exp over the range softmax and SiLU
// use, and saturates like ggml's: 0 far below, +Inf far above.
func TestSIMDExpf(t *testing.T) {
	for _, s := range widths {
		for x := float32(-87); x < 88; x += 0.0137 {
			want := math.Exp(float64(x))
			got := float64(s.expf(x))
			require.InEpsilon(t, want, got, 4e-7, "lanes %d x %g", s.lanes, x)
		}
		assert.Zero(t, s.expf(float32(math.Inf(-1))), "lanes %d", s.lanes)
		assert.Zero(t, s.expf(-200), "lanes %d", s.lanes)
		assert.True(t, math.IsInf(float64(s.expf(200)), 1), "lanes %d", s.lanes)
		assert.Equal(t, float32(1), s.expf(0), "lanes %d", s.lanes)
	}
}

func f16Bytes(x []float32) []byte {
	b := make([]byte, 2*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint16(b[2*i:], quant.F32ToF16(v))
	}
	return b
}

// The f16 dot is the exact dot of the rounded inputs up to f32 summation
// error; padding changes only the tail's association.
func TestSIMDDotF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, s := range widths {
		for _, n := range []int{1, 7, 8, 63, 64, 65, 100, 256, 1000} {
			x, yb := f16Bytes(randVec(rng, n)), f16Bytes(randVec(rng, n))
			y := make([]float32, n)
			for i := range y {
				y[i] = f16At(yb, i)
			}
			var want, mag float64
			for i := range n {
				p := float64(f16At(x, i)) * float64(y[i])
				want += p
				mag += math.Abs(p)
			}
			for _, padded := range []bool{false, true} {
				got := s.dotF16(x, y, n, padded)
				assert.InDelta(t, want, got, 1e-6*mag+1e-7, "lanes %d n %d padded %v", s.lanes, n, padded)
			}
			if n%(4*s.lanes) == 0 {
				assert.Equal(t, s.dotF16(x, y, n, false), s.dotF16(x, y, n, true), "lanes %d n %d", s.lanes, n)
			}
		}
	}
}

func TestSIMDSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, s := range widths {
		for _, n := range []int{1, 5, 16, 37, 300} {
			w := randVec(rng, n)
			want := make([]float64, n)
			var sum float64
			maxW := math.Inf(-1)
			for _, v := range w {
				maxW = max(maxW, float64(v))
			}
			for i, v := range w {
				want[i] = math.Exp(float64(v) - maxW)
				sum += want[i]
			}
			s.softmax(w)
			for i := range w {
				assert.InDelta(t, want[i]/sum, w[i], 1e-6, "lanes %d n %d i %d", s.lanes, n, i)
			}
		}
	}
}

// SwiGLU is silu(gate) * up, silu(x) = x / (1 + e^-x), over whole vectors
// and the tail alike.
func TestSIMDSwiGLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, s := range widths {
		gate, up := randVec(rng, 37), randVec(rng, 37)
		got := make([]float32, 37)
		s.swiglu(got, gate, up)
		for i := range got {
			g := float64(gate[i])
			assert.InDelta(t, g/(1+math.Exp(-g))*float64(up[i]), got[i], 1e-6, "lanes %d i %d", s.lanes, i)
		}
	}
}

// scalef equals the math.Ldexp form it replaces on every exponent expf uses,
// including results that overflow or become subnormal in f32.
func TestScalefEqualsLdexp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for n := -192; n <= 192; n++ {
		for range 200 {
			j := float32(1 + r.Float64())
			if r.IntN(4) == 0 {
				j = -j
			}
			want := float32(math.Ldexp(float64(j), n))
			require.Equal(t, math.Float32bits(want), math.Float32bits(scalef(j, n)), "j=%v n=%d", j, n)
		}
	}
}
