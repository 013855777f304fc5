package parity_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// Bounds of the teacher-forced comparison, per position.
//
// Both sides quantize activations to the same vec_dot_type with the same
// rounding and sum integer block products exactly; what differs is the
// order of f32 accumulation (ggml's SIMD lanes, llamafile's tiles in
// batched passes, FMA contraction in RoPE/softmax) — relative errors of a
// few f32 ulps per operation that can flip an activation's Q8 rounding, and
// so move a logit by about one quantization step times its weight. The
// max-abs bound is relative to the position's largest reference logit.
const (
	minCosine = 0.999
	maxAbsRel = 0.02 // max |ours - ref| <= maxAbsRel * max(1, max |ref|)
	top2Gap   = 1e-3 // top-1 must agree unless ref's top-2 gap is below this
	minTokens = 256  // teacher-forced positions per model
	storyPath = "testdata/story.txt"
)

// target is one model file the forward is compared on.
type target struct {
	name string
	path func(t *testing.T, l *ref.Lib) string
}

func stories(ftype string) target {
	return target{name: "stories260K-" + ftype, path: func(t *testing.T, l *ref.Lib) string {
		src := reftest.SharedModel(t, "stories260K.gguf")
		if ftype == "F32" {
			return src
		}
		out := filepath.Join(t.TempDir(), "stories260K-"+ftype+".gguf")
		require.NoError(t, l.Quantize(src, out, ftype))
		return out
	}}
}

func targets() []target {
	return []target{stories("F32"), stories("Q4_K_M"), stories("F16"), stories("BF16"), stories("Q8_0"), stories("Q5_0"), stories("Q4_0")}
}

// loadOurs opens path with package gguf and loads it with package model.
func loadOurs(t *testing.T, path string, threads int) *model.Model {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	m, err := model.Load(f, model.Options{Threads: threads})
	require.NoError(t, err)
	t.Cleanup(func() {
		m.Close()
		f.Close()
	})
	return m
}

func storyTokens(t *testing.T, m *ref.Model) []int32 {
	t.Helper()
	text, err := os.ReadFile(storyPath)
	require.NoError(t, err)
	toks, err := m.Tokenize(string(text), true, false)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(toks), minTokens, "the story is too short for this vocabulary")
	return toks
}

func TestTeacherForcedLogits(t *testing.T) {
	l := reftest.Lib(t)
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			path := tg.path(t, l)
			rm := reftest.Model(t, l, path)
			toks := storyTokens(t, rm)
			if len(toks) > 320 {
				toks = toks[:320]
			}
			rc := reftest.Context(t, rm, ref.ContextConfig{NCtx: 512, NBatch: 1})
			want, err := rc.Logits(toks)
			require.NoError(t, err)

			m := loadOurs(t, path, 2)
			s := m.NewStep()
			var worst struct {
				cos     float64
				cosPos  int
				absRel  float64
				absPos  int
				flipped int
			}
			worst.cos = 1
			for i, tok := range toks {
				got, err := s.Step(tok, i)
				require.NoError(t, err)
				cos, maxAbs, refMax := compare(got, want[i])
				rel := maxAbs / math.Max(1, refMax)
				if cos < worst.cos {
					worst.cos, worst.cosPos = cos, i
				}
				if rel > worst.absRel {
					worst.absRel, worst.absPos = rel, i
				}
				assert.GreaterOrEqual(t, cos, minCosine, "position %d: cosine", i)
				assert.LessOrEqual(t, rel, maxAbsRel, "position %d: max |Δ| %g, max |ref| %g", i, maxAbs, refMax)
				top, second := top2(want[i])
				if want[i][top]-want[i][second] >= top2Gap {
					if !assert.Equal(t, top, argmax(got), "position %d: top-1", i) {
						worst.flipped++
					}
				}
			}
			t.Logf("%d positions: min cosine %.6f (position %d), max |Δ|/max(1,|ref|) %.2e (position %d), top-1 flips %d",
				len(toks), worst.cos, worst.cosPos, worst.absRel, worst.absPos, worst.flipped)

			// The batched path ends where the stepped one did.
			p := m.NewStep()
			got, err := p.Prefill(toks, 0)
			require.NoError(t, err)
			cos, _, _ := compare(got, want[len(toks)-1])
			assert.GreaterOrEqual(t, cos, minCosine, "prefill: cosine")
		})
	}
}

// TestGreedyText: 200 greedy tokens from "Once upon a time", end of
// generation ignored on both sides, must be llama.cpp's tokens exactly.
func TestGreedyText(t *testing.T) {
	const n = 200
	l := reftest.Lib(t)
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			path := tg.path(t, l)
			rm := reftest.Model(t, l, path)
			prompt, err := rm.Tokenize("Once upon a time", true, false)
			require.NoError(t, err)
			rc := reftest.Context(t, rm, ref.ContextConfig{NCtx: 512})
			want, err := rc.Greedy(prompt, n, true)
			require.NoError(t, err)

			m := loadOurs(t, path, 2)
			got := greedy(t, m.NewStep(), prompt, n)
			if !assert.Equal(t, want, got) {
				wantText, _ := rm.Detokenize(want, false, false)
				gotText, _ := rm.Detokenize(got, false, false)
				t.Logf("llama.cpp: %q\nours:      %q", wantText, gotText)
			}
		})
	}
}

// greedy prefills prompt and decodes n tokens, each the first argmax.
func greedy(t *testing.T, s *model.Step, prompt []int32, n int) []int32 {
	t.Helper()
	logits, err := s.Prefill(prompt, 0)
	require.NoError(t, err)
	out := make([]int32, 0, n)
	for pos := len(prompt); ; pos++ {
		next := int32(argmax(logits))
		out = append(out, next)
		if len(out) == n {
			return out
		}
		logits, err = s.Step(next, pos)
		require.NoError(t, err, "position %d", pos)
	}
}

// compare returns the cosine of a and b, max |a-b| and max |b|.
func compare(a, b []float32) (cos, maxAbs, maxRef float64) {
	if len(a) != len(b) {
		panic(fmt.Sprintf("compare: lengths %d and %d", len(a), len(b)))
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		maxAbs = math.Max(maxAbs, math.Abs(x-y))
		maxRef = math.Max(maxRef, math.Abs(y))
	}
	return dot / math.Sqrt(na*nb), maxAbs, maxRef
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// top2 returns the indices of the largest and second largest values.
func top2(x []float32) (first, second int) {
	first, second = 0, -1
	for i := 1; i < len(x); i++ {
		switch {
		case x[i] > x[first]:
			first, second = i, first
		case second < 0 || x[i] > x[second]:
			second = i
		}
	}
	return first, second
}
