package model

import (
	"github.com/realizar-host/realizar-host/q4k"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attendHead against a float64 softmax attention over the same f16-rounded
// keys, values and query: the only differences are f32 accumulation and the
// f16 rounding of the probabilities (relative 2^-11).
func TestAttendHeadMatchesFloat64(t *testing.T) {
	const layers, kvHeads, headDim, n = 2, 2, 8, 37
	rng := rand.New(rand.NewPCG(1, 2))
	c := newKVCache(layers, kvHeads*headDim)
	c.grow(n, 0)
	keys := make([][]float32, n)
	vals := make([][]float32, n)
	for p := range n {
		keys[p] = randVec(rng, kvHeads*headDim)
		vals[p] = randVec(rng, kvHeads*headDim)
		c.store(1, p, keys[p], vals[p])
	}
	q := randVec(rng, headDim)
	scale := 1 / float32(math.Sqrt(headDim))
	out := make([]float32, headDim)
	var s attnScratch
	const kvHead = 1
	attendHead(out, q, c, 1, kvHead, headDim, n, scale, &s)

	r := func(x float32) float64 { return float64(q4k.F16ToF32(q4k.F32ToF16(x))) }
	scores := make([]float64, n)
	maxS := math.Inf(-1)
	for p := range n {
		for d := range headDim {
			scores[p] += r(keys[p][kvHead*headDim+d]) * r(q[d])
		}
		scores[p] *= float64(scale)
		maxS = max(maxS, scores[p])
	}
	var sum float64
	for p := range scores {
		scores[p] = math.Exp(scores[p] - maxS)
		sum += scores[p]
	}
	for d := range headDim {
		var want float64
		for p := range n {
			want += scores[p] / sum * r(vals[p][kvHead*headDim+d])
		}
		assert.InDelta(t, want, out[d], 2e-3, "dim %d", d)
	}
}

// A single position attends only to itself: the output is its value.
func TestAttendHeadSinglePosition(t *testing.T) {
	c := newKVCache(1, 4)
	c.grow(1, 0)
	c.store(0, 0, []float32{1, 2, 3, 4}, []float32{0.5, -1, 2, 8})
	out := make([]float32, 4)
	var s attnScratch
	attendHead(out, []float32{1, 1, 1, 1}, c, 0, 0, 4, 1, 0.5, &s)
	assert.Equal(t, []float32{0.5, -1, 2, 8}, out)
}

// Growing keeps every stored key and value in place.
func TestKVCacheGrowKeepsContents(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := newKVCache(2, 6)
	c.grow(3, 0)
	keys := [][]float32{randVec(rng, 6), randVec(rng, 6), randVec(rng, 6)}
	vals := [][]float32{randVec(rng, 6), randVec(rng, 6), randVec(rng, 6)}
	for p := range 3 {
		c.store(1, p, keys[p], vals[p])
	}
	before := make([][]byte, 6)
	for d := range 6 {
		before[d] = append([]byte(nil), c.values(1, d, 3)...)
	}
	k0 := append([]byte(nil), c.key(1, 2, 0, 6)...)

	c.grow(10, 3)
	require.Equal(t, 10, c.capacity)
	assert.Equal(t, k0, c.key(1, 2, 0, 6))
	for d := range 6 {
		assert.Equal(t, before[d], c.values(1, d, 3), "dim %d", d)
	}
	assert.EqualValues(t, 2*10*6*2*2, c.bytes())

	c.grow(5, 3) // never shrinks
	assert.Equal(t, 10, c.capacity)
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}
