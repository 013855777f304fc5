package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// storeValues writes a run of positions' values with the bytes that
// storing them one position at a time gives, for runs of one, of a few
// (around the eight-float conversion step) and of a prompt's chunk, at
// positions that start anywhere, and leaves the other positions alone.
func TestStoreValuesEqualsStore(t *testing.T) {
	const layers, kvDim, capacity = 2, 24, 200
	rng := rand.New(rand.NewPCG(31, 31))
	for _, tc := range []struct{ pos, rows int }{{0, 1}, {5, 1}, {0, 7}, {3, 8}, {9, 9}, {17, 64}, {130, 70}} {
		t.Run(fmt.Sprintf("pos=%d/rows=%d", tc.pos, tc.rows), func(t *testing.T) {
			want, got := newKVCache(layers, kvDim), newKVCache(layers, kvDim)
			want.grow(capacity, 0)
			got.grow(capacity, 0)
			for l := range layers {
				for p := range capacity {
					v := randVec(rng, kvDim)
					want.store1Values(l, p, v)
					got.store1Values(l, p, v)
				}
			}
			values := randVec(rng, tc.rows*kvDim)
			for r := range tc.rows {
				want.store1Values(1, tc.pos+r, values[r*kvDim:(r+1)*kvDim])
			}
			tmp := make([]float32, tc.rows)
			got.storeValues(1, tc.pos, tc.rows, 0, 5, values, tmp)
			got.storeValues(1, tc.pos, tc.rows, 5, kvDim, values, tmp)
			require.Equal(t, want.v, got.v)
		})
	}
}
