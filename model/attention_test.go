package model

import (
	"github.com/realizar-host/realizar-host/internal/quant"
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
	attendHead(out, q, c, 1, kvHead, headDim, 0, n, scale, false, &s)

	r := func(x float32) float64 { return float64(quant.F16ToF32(quant.F32ToF16(x))) }
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
	attendHead(out, []float32{1, 1, 1, 1}, c, 0, 0, 4, 0, 1, 0.5, false, &s)
	assert.Equal(t, []float32{0.5, -1, 2, 8}, out)
}

// A sliding window is llama.cpp's -inf mask over the whole cache, bit for
// bit: attendHead skipping the masked positions (from the vector boundary
// below the window on) equals the full-range computation with the masked
// scores set to -inf, for windows ending anywhere in a vector and both of
// ggml's vector widths.
func TestAttendHeadWindowEqualsMask(t *testing.T) {
	defer func(w simd) { simdWidth = w }(simdWidth)
	const headDim, capacity = 16, 300
	rng := rand.New(rand.NewPCG(5, 6))
	c := newKVCache(1, 2*headDim)
	c.grow(capacity, 0)
	for p := range capacity {
		c.store(0, p, randVec(rng, 2*headDim), randVec(rng, 2*headDim))
	}
	q := randVec(rng, headDim)
	for _, lanes := range []int{8, 16} {
		simdWidth = simd{lanes: lanes}
		for _, n := range []int{1, 7, 64, 65, 131, 300} {
			for _, window := range []int{1, 3, 16, 40, 64, 129, 400} {
				first := max(0, n-window)
				var s attnScratch
				got := make([]float32, headDim)
				attendHead(got, q, c, 0, 1, headDim, first, n, 0.25, false, &s)
				want := maskedAttention(c, q, headDim, first, n, 0.25)
				assert.Equal(t, want, got, "lanes %d, n %d, window %d", lanes, n, window)
			}
		}
	}
}

// maskedAttention is attendHead over positions 0..n-1 with the scores of
// those before first set to -inf after scaling, as llama.cpp's KQ mask.
func maskedAttention(c *kvCache, q []float32, headDim, first, n int, scale float32) []float32 {
	q16 := make([]float32, headDim)
	for i, x := range q {
		q16[i] = roundF16(x)
	}
	var pad f16Pad
	scores := make([]float32, n)
	simdWidth.dotF16Rows(scores, c.keys(0, headDim), 2*c.kvDim, q16, headDim, false, &pad)
	for t := range scores {
		scores[t] *= scale
		if t < first {
			scores[t] = float32(math.Inf(-1))
		}
	}
	simdWidth.softmax(scores)
	for t, p := range scores {
		scores[t] = roundF16(p)
	}
	out := make([]float32, headDim)
	simdWidth.dotF16Rows(out, c.valueRows(0, headDim), 2*c.capacity, scores, n, true, &pad)
	return out
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

// attendGroup gives every head of every row attendHead's bits: rows of one
// sequence at consecutive positions (causal: row i sees positions up to its
// own), both head sizes the kernel takes, positions ending anywhere in a
// vector, and a group of one to eight heads.
func TestAttendGroupEqualsAttendHead(t *testing.T) {
	if !groupedAttention(&Config{HeadDim: 64}, false) {
		t.Logf("no AVX-512F here: attention takes attendHead only (the grouped kernel is not used)")
		return
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct{ headDim, kvHeads, group, rows, start int }{
		{64, 2, 4, 1, 0}, {64, 2, 4, 4, 13}, {64, 1, 8, 8, 120}, {128, 2, 2, 3, 47},
		{64, 4, 1, 5, 16}, {128, 1, 8, 2, 255},
	} {
		heads := tc.kvHeads * tc.group
		cfg := Config{HeadDim: tc.headDim, Heads: heads, KVHeads: tc.kvHeads}
		qDim, kvDim := heads*tc.headDim, tc.kvHeads*tc.headDim
		cache := newKVCache(1, kvDim)
		n := tc.start + tc.rows
		cache.grow(n+3, 0)
		for p := range n {
			cache.store(0, p, randVec(rng, kvDim), randVec(rng, kvDim))
		}
		s := &Sequence{m: &Model{cfg: cfg}, q: randVec(rng, tc.rows*qDim), attn: make([]float32, tc.rows*qDim)}
		for b := range tc.rows {
			s.rowSeq = append(s.rowSeq, &Sequence{cache: cache})
			s.rowPos = append(s.rowPos, tc.start+b)
		}
		for b := range s.rowSeq {
			s.rowSeq[b] = s.rowSeq[0]
		}
		scale := 1 / float32(math.Sqrt(float64(tc.headDim)))
		var sc attnScratch
		for kv := range tc.kvHeads {
			s.attendGroup(0, 0, tc.rows, kv, scale, &sc)
		}
		for b := range tc.rows {
			for h := range heads {
				off := b*qDim + h*tc.headDim
				want := make([]float32, tc.headDim)
				attendHead(want, s.q[off:off+tc.headDim], cache, 0, h/tc.group, tc.headDim, 0, tc.start+b+1, scale, false, &sc)
				require.Equal(t, want, s.attn[off:off+tc.headDim], "%+v: row %d head %d", tc, b, h)
			}
		}
	}
}
