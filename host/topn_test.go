package host

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
)

// topN agrees with sorting everything and taking the first k, for ties,
// NaN, ±Inf and k past the length.
func TestTopNAgreesWithFullSort(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for seed := uint64(0); seed < 200; seed++ {
		r := abi.NewRNG(seed)
		n := 1 + int(r.Next()%300)
		k := 1 + int(r.Next()%64)
		logits := make([]float32, n)
		for i := range logits {
			switch r.Next() % 10 {
			case 0:
				logits[i] = nan
			case 1:
				logits[i] = -inf
			case 2:
				logits[i] = inf
			case 3, 4:
				logits[i] = float32(r.Next() % 3)
			default:
				logits[i] = float32(r.Uniform()*8 - 4)
			}
		}
		ids := make([]int32, k)
		vals := make([]float32, k)
		c := topN(logits, k, ids, vals)

		allIDs := make([]int32, n)
		for i := range allIDs {
			allIDs[i] = int32(i)
		}
		allVals := slices.Clone(logits)
		abi.SortCandidates(allIDs, allVals)
		require.Equal(t, min(k, n), c)
		require.Equal(t, allIDs[:c], ids[:c], "seed %d n %d k %d", seed, n, k)
	}
}

func TestTopNAllocatesNothing(t *testing.T) {
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(i % 977)
	}
	ids, vals := make([]int32, 40), make([]float32, 40)
	require.Zero(t, testing.AllocsPerRun(10, func() { topN(logits, 40, ids, vals) }))
}
