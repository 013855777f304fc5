package cuda

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// rows makes positions copies of base.
func rows(positions int, base []float32) [][]float32 {
	out := make([][]float32, positions)
	for i := range out {
		out[i] = append([]float32(nil), base...)
	}
	return out
}

// bent returns x turned toward e_k so that cosine(x, result) is about cos.
func bent(x []float32, k int, cos float64) []float32 {
	var n float64
	for _, v := range x {
		n += float64(v) * float64(v)
	}
	n = math.Sqrt(n)
	out := make([]float32, len(x))
	sin := math.Sqrt(1 - cos*cos)
	// x's component orthogonal to e_k would be exact only for x ⟂ e_k; the
	// test vectors below have x[k] == 0.
	for i, v := range x {
		out[i] = float32(cos * float64(v))
	}
	out[k] += float32(sin * n)
	return out
}

func TestJudge(t *testing.T) {
	base := []float32{3, 1, 0, -2, 0.5, 0} // argmax 0; e_5 is orthogonal
	cpu := rows(4, base)
	for _, tc := range []struct {
		name   string
		gpu    func() [][]float32
		ok     bool
		reason string
	}{
		{"identical", func() [][]float32 { return rows(4, base) }, true, ""},
		{"scaled (cosine 1)", func() [][]float32 {
			g := rows(4, base)
			for _, r := range g {
				for i := range r {
					r[i] *= 1.5
				}
			}
			return g
		}, true, ""},
		{"cosine 0.96, same argmax", func() [][]float32 {
			g := rows(4, base)
			g[2] = bent(base, 5, 0.96)
			return g
		}, true, ""},
		{"cosine 0.94 at one position", func() [][]float32 {
			g := rows(4, base)
			g[3] = bent(base, 5, 0.94)
			return g
		}, false, "position 3: cosine"},
		{"argmax differs at cosine 0.97", func() [][]float32 {
			g := rows(4, base)
			g[1] = bent(base, 5, 0.97)
			g[1][5] = 10 // the new direction now dominates
			return g
		}, false, "position 1"},
		{"NaN", func() [][]float32 {
			g := rows(4, base)
			g[0][2] = float32(math.NaN())
			return g
		}, false, "position 0: GPU logit 2 is NaN"},
		{"Inf", func() [][]float32 {
			g := rows(4, base)
			g[2][1] = float32(math.Inf(1))
			return g
		}, false, "position 2: GPU logit 1"},
		{"short", func() [][]float32 { return rows(3, base) }, false, "3 GPU positions, 4 CPU positions"},
		{"short row", func() [][]float32 {
			g := rows(4, base)
			g[1] = g[1][:5]
			return g
		}, false, "position 1: 5 GPU logits, 6 CPU logits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(tc.gpu(), cpu)
			assert.Equal(t, tc.ok, v.OK, v.String())
			if tc.ok {
				assert.Empty(t, v.Reason)
				assert.GreaterOrEqual(t, v.MinCos, minCosine)
				assert.Contains(t, v.String(), "pass")
			} else {
				assert.Contains(t, v.Reason, tc.reason)
				assert.Contains(t, v.String(), "reject")
			}
		})
	}
}

// A near tie may flip the argmax at a cosine of 0.98 or more: accepted.
func TestJudgeArgmaxNearTie(t *testing.T) {
	gpu := rows(4, []float32{3, 2.999, 0, 1, 0, 0})
	cpu := rows(4, []float32{2.999, 3, 0, 1, 0, 0})
	v := judge(gpu, cpu)
	assert.True(t, v.OK, v.String())
	assert.Greater(t, v.MinCos, argmaxCosine)
}

func TestJudgeWorstPosition(t *testing.T) {
	base := []float32{3, 1, 0, -2, 0.5, 0}
	g := rows(5, base)
	g[1] = bent(base, 5, 0.99)
	g[3] = bent(base, 5, 0.97)
	v := judge(g, rows(5, base))
	assert.True(t, v.OK)
	assert.Equal(t, 3, v.WorstPos)
	assert.InDelta(t, 0.97, v.MinCos, 1e-4)
	assert.Equal(t, 5, v.Positions)
}

func TestProbeSequence(t *testing.T) {
	a := probeSequence(32000, probeTokens)
	assert.Len(t, a, 64)
	assert.Equal(t, a, probeSequence(32000, probeTokens), "deterministic")
	seen := map[int32]bool{}
	for _, x := range a {
		assert.True(t, x >= 0 && x < 32000)
		seen[x] = true
	}
	assert.Greater(t, len(seen), 60, "spread over the vocabulary")
	for _, x := range probeSequence(7, 100) {
		assert.True(t, x >= 0 && x < 7)
	}
}
