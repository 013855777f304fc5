//go:build amd64 && !purego

package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The assembly vector parts of dotF16 and reduceVectors give the Go code's
// bits, for both
// vector widths, padded or not, over lengths around the group boundaries
// and values of wide range (so that any change of association shows).
func TestDotF16AsmEqualsGo(t *testing.T) {
	if !useF16Asm {
		t.Skip("no AVX2/F16C on this CPU: the Go loop is the only path")
	}
	rng := rand.New(rand.NewPCG(11, 11))
	for _, s := range widths {
		for _, n := range []int{1, 31, 32, 33, 64, 65, 127, 128, 129, 200, 256, 257, 1000} {
			v := randVec(rng, n)
			for i := range v {
				v[i] *= float32(math.Exp2(float64(rng.IntN(24) - 12)))
			}
			x, yb := f16Bytes(v), f16Bytes(randVec(rng, n))
			y := make([]float32, n)
			for i := range y {
				y[i] = f16At(yb, i)
			}
			for _, padded := range []bool{false, true} {
				got := s.dotF16(x, y, n, padded)
				useF16Asm = false
				want := s.dotF16(x, y, n, padded)
				useF16Asm = true
				require.Equal(t, math.Float32bits(want), math.Float32bits(got), "lanes %d n %d padded %v", s.lanes, n, padded)
			}
		}
	}
}
