package guest_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

// TestSelectTop compares SelectTop with sorting everything, on logits with
// ties, NaN and -Inf, for sizes around the unrolled block.
func TestSelectTop(t *testing.T) {
	r := abi.NewRNG(5)
	for _, n := range []int{1, 7, 8, 9, 17, 100, 1000} {
		for _, k := range []int{1, 2, 8, 40, 1000} {
			logits := make([]float32, n)
			for i := range logits {
				switch u := r.Uniform(); {
				case u < 0.05:
					logits[i] = float32(math.NaN())
				case u < 0.1:
					logits[i] = float32(math.Inf(-1))
				default:
					logits[i] = float32(int(u * 20)) // many ties
				}
			}
			allIDs := make([]int32, n)
			allVals := append([]float32(nil), logits...)
			for i := range allIDs {
				allIDs[i] = int32(i)
			}
			abi.SortCandidates(allIDs, allVals)
			ids, vals := make([]int32, k), make([]float32, k)
			got := guest.SelectTop(logits, k, ids, vals)
			want := min(n, k)
			assert.Equal(t, want, got)
			assert.Equal(t, allIDs[:want], ids[:got], "n=%d k=%d", n, k)
		}
	}
}
