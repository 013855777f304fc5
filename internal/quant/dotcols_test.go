package quant_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/internal/quant/quanttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DotColsForMatrix picks the order DotForMatrix picks: for row counts that
// are and are not multiples of 32 (the AMX order where AMXOrder holds),
// every vector gets the bits of DotForMatrix's row kernel.
func TestDotColsForMatrixMatchesDotForMatrix(t *testing.T) {
	const n, nc = 512, 5
	r := rand.New(rand.NewPCG(9, 9))
	for _, typ := range quanttest.WeightTypes {
		for _, rows := range []int{32, 64, 33, 1} {
			dot, err := quant.DotForMatrix(typ, rows)
			require.NoError(t, err)
			cols, err := quant.DotColsForMatrix(typ, rows)
			require.NoError(t, err)
			as, _ := quant.ActivationSize(typ, n)
			w, _ := quanttest.Inputs(typ, n, 1, r)
			var acts []byte
			for range nc {
				_, a := quanttest.Inputs(typ, n, 1, r)
				acts = append(acts, a...)
			}
			got := make([]float32, nc)
			cols(got, 1, w, acts, n, nc)
			for c := range nc {
				want := dot(w, acts[c*as:(c+1)*as], n)
				assert.Equal(t, math.Float32bits(want), math.Float32bits(got[c]), "%v rows %d vector %d", typ, rows, c)
			}
		}
	}
	_, err := quant.DotColsForMatrix(quant.Q8_K, 32)
	require.ErrorIs(t, err, quant.ErrUnknownType)
}
