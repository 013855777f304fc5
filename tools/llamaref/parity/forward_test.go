package parity

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// Bounds of the teacher-forced comparison, per position.
//
// Everything model computes outside the weight products (RMSNorm, RoPE,
// the f16 KV cache, attention's dots and softmax, SwiGLU) follows ggml's x86
// float association exactly: with an F32 dot product in ggml's order, the
// stories260K F32 logits equal llama.cpp's bit for bit. What can differ is
// the f32 association inside quant's row dot products: quant follows ggml's
// orders for Q4_0/Q5_0/Q8_0/Q4_K/Q5_K/Q6_K and F16 (AVX2 and AVX-512 builds)
// and for the matrices ggml moves into its AMX buffer (Q4_K/Q5_K/Q6_K/Q8_0),
// so on an AMX machine the llama targets' quantized logits equal llama.cpp's
// bit for bit (fixture-qwen2 keeps a 3e-6 difference that is not from the
// weight products), and on an AVX2 machine without AMX, where Q4_K matrices
// are in ggml's CPU_REPACK order (quant.RepackOrder), every target's are;
// BF16 and CPU_REPACK's Q4_0 order are quant's own (docs/ggml-order.md). A differing order gives a relative
// error of an ulp or so, until it flips one activation's Q8 rounding (one
// step, amax/127): the flip enters the KV cache and every later position.
// Measured over the targets below, the largest logit moves by at most
// 2.5% of the largest reference logit; maxAbsRel is twice that.
const (
	minCosine = 0.999
	maxAbsRel = 0.05 // max |ours - ref| <= maxAbsRel * max(1, max |ref|)
	top2Gap   = 1e-3 // top-1 must agree unless ref's top-2 gap is below this
	minTokens = 256  // teacher-forced positions per model
	storyPath = "testdata/story.txt"

	storiesReadmeText = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. " +
		"One day, she saw a big, red ball. She wanted to play with it, but it was too high."
)

// knownOrderGap says why a target's top-1 tokens (at positions where
// llama.cpp's top-2 gap is at least top2Gap) or 200-token greedy text may
// not yet equal llama.cpp's on this machine — some of its row dot products
// do not sum in the order llama.cpp's CPU build uses here (see
// docs/ggml-order.md) — or returns ok = false when quant follows ggml's order
// for all of them. For a known gap the test logs the flips and the common
// greedy prefix instead of failing; the cosine and max-abs bounds still
// hold.
func knownOrderGap(name string) (gap string, ok bool) {
	if quant.Fast().Name != "avx2" {
		// ggml's NEON, AVX-only and scalar builds sum in orders quant does not follow.
		return "ggml orders of non-AVX2 builds", true
	}
	switch name {
	case "fixture-tiny-Q4_K_M", "fixture-tiny-Q4_K_S":
		if quant.RepackOrder() && !quant.AMXOrder() {
			// Greedy only: the teacher-forced logits (one token per call on
			// both sides) are bit-identical; llama.cpp's 5-token prompt pass
			// on this fixture is not yet reproduced (measured: the first
			// 170 and 75 of 200 tokens agree).
			return "llama.cpp's batched prompt pass on fixture-tiny's K-quants", true
		}
	}
	if !quant.AMXOrder() && !quant.RepackOrder() {
		return "Q4_K in ggml's CPU_REPACK order, which this CPU's ggml build does not use", true
	}
	return "", false
}

// bitExact reports whether a target's teacher-forced logits must equal
// llama.cpp's bit for bit: on a CPU where ggml uses its CPU_REPACK order and
// no AMX (quant follows every order it uses there), every target without a
// known gap.
func bitExact(name string) bool {
	_, gap := knownOrderGap(name)
	return !gap && quant.RepackOrder() && !quant.AMXOrder()
}

// forwardFiles are the (source, file type) pairs the forward is compared
// on, by base name of the source: the real stories260K as converted (F32)
// and quantized by llama.cpp, and the fixtures quantized by llama.cpp.
var forwardFiles = []struct{ source, ftype string }{
	{"stories260K.gguf", "F32"},
	{"stories260K.gguf", "Q4_K_M"},
	{"fixture-tiny-F32.gguf", "Q4_K_M"},
	{"fixture-tiny-F32.gguf", "Q4_K_S"},
	{"fixture-odd-F32.gguf", "Q4_K_M"},
	{"fixture-qwen2-tiny-F32.gguf", "Q4_K_M"},
	{"fixture-qwen3-tiny-F32.gguf", "F32"},
	{"fixture-qwen3-tiny-F32.gguf", "F16"},
	{"fixture-qwen3-tiny-F32.gguf", "Q8_0"},
	{"fixture-qwen3-tiny-F32.gguf", "Q4_K_M"},
	{"fixture-qwen3moe-tiny-F32.gguf", "F32"},
	{"fixture-qwen3moe-tiny-F32.gguf", "F16"},
	{"fixture-qwen3moe-tiny-F32.gguf", "Q8_0"},
	{"fixture-qwen3moe-tiny-F32.gguf", "Q4_K_M"},
	{"fixture-tiny-yarn-F32.gguf", "F32"},
	{"fixture-tiny-yarn-F32.gguf", "Q8_0"},
	{"fixture-phi3-tiny-F32.gguf", "F32"},
	{"fixture-phi3-tiny-F32.gguf", "F16"},
	{"fixture-phi3-tiny-F32.gguf", "Q8_0"},
	{"fixture-phi3-tiny-F32.gguf", "Q4_K_M"},
	{"fixture-gemma3-tiny-F32.gguf", "F32"},
	{"fixture-gemma3-tiny-F32.gguf", "F16"},
	{"fixture-gemma3-tiny-F32.gguf", "Q8_0"},
	{"fixture-gemma3-tiny-F32.gguf", "Q4_K_M"},
}

// positions returns how many teacher-forced positions and greedy tokens a
// target is compared on: 320 and 200, or for gemma3-tiny 96 and 64 (its
// window is 40 positions, so both still run the sliding layers well past
// it), which keeps its four targets' share of the suite small.
func positions(name string) (teacher, greedy int) {
	if strings.HasPrefix(name, "fixture-gemma3-tiny-") {
		return 96, 64
	}
	return 320, 200
}

// target is one model file the forward is compared on.
type target struct{ name, path string }

// targets returns the files of forwardFiles, quantizing on first use.
func targets(t *testing.T, l *ref.Lib) []target {
	t.Helper()
	var out []target
	for _, f := range forwardFiles {
		if f.ftype == "F32" {
			for _, src := range sourceModels(t, l) {
				if filepath.Base(src.path) == f.source {
					out = append(out, target{strings.TrimSuffix(strings.TrimSuffix(f.source, ".gguf"), "-F32") + "-F32", src.path})
				}
			}
			continue
		}
		for _, q := range quantizedFiles(t, l) {
			if filepath.Base(q.source) == f.source && q.ftype == f.ftype {
				out = append(out, target{strings.TrimSuffix(filepath.Base(q.path), ".gguf"), q.path})
			}
		}
	}
	require.Len(t, out, len(forwardFiles), "every forward target is generated")
	// The 110M fixture is too large for CI (a 537 MB F32 source); on demand,
	// name its llama.cpp Q4_K_M form (e.g. .cache/bench/fixture-m110-Q4_K_M.gguf,
	// which `make bench` builds) in REALIZAR_PARITY_M110.
	if p := os.Getenv(envParityM110); p != "" {
		out = append(out, target{"fixture-m110-Q4_K_M", p})
	}
	return out
}

// envParityM110 names the 110M fixture's llama.cpp Q4_K_M file to compare too.
const envParityM110 = "REALIZAR_PARITY_M110"

// refContext is the context the reference runs at (its n_ctx, and so its
// n_ctx_seq, which chooses phi3's LongRoPE factors); ours is told the same.
const refContext = 512

// loadOurs opens path with package gguf and loads it with package model,
// for a context of refContext positions.
func loadOurs(t *testing.T, path string, threads int) *model.Model {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	m, err := model.Load(f, model.Options{Threads: threads, ContextSize: refContext})
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
	for _, tg := range targets(t, l) {
		t.Run(tg.name, func(t *testing.T) {
			path := tg.path
			rm := reftest.Model(t, l, path)
			toks := storyTokens(t, rm)
			if n, _ := positions(tg.name); len(toks) > n {
				toks = toks[:n]
			}
			rc := reftest.Context(t, rm, ref.ContextConfig{NCtx: refContext, NBatch: 1})
			want, err := rc.Logits(toks)
			require.NoError(t, err)

			m := loadOurs(t, path, 2)
			s := m.NewSequence()
			var worst struct {
				cos     float64
				cosPos  int
				absRel  float64
				absPos  int
				flipped int
			}
			worst.cos = 1
			firstDiff := -1 // the first position whose logits are not llama.cpp's bit for bit
			for i, tok := range toks {
				got, err := s.Step(tok, i)
				require.NoError(t, err)
				if firstDiff < 0 && !slices.Equal(bitsOf(got), bitsOf(want[i])) {
					firstDiff = i
				}
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
				top, second := topTwo(want[i])
				if want[i][top]-want[i][second] >= top2Gap && top != argmax(got) {
					worst.flipped++
					if _, known := knownOrderGap(tg.name); !known {
						t.Errorf("position %d: top-1 %d, llama.cpp's %d (top-2 gap %g)", i, argmax(got), top, want[i][top]-want[i][second])
					}
				}
			}
			t.Logf("%d positions: min cosine %.6f (position %d), max |Δ|/max(1,|ref|) %.2e (position %d), top-1 flips %d",
				len(toks), worst.cos, worst.cosPos, worst.absRel, worst.absPos, worst.flipped)
			if firstDiff >= 0 {
				t.Logf("first position not bit-exact: %d", firstDiff)
				if bitExact(tg.name) {
					t.Errorf("logits at position %d are not llama.cpp's bit for bit", firstDiff)
				}
			}
			if gap, known := knownOrderGap(tg.name); known && worst.flipped > 0 {
				t.Logf("KNOWN GAP (%s): %d top-1 flips", gap, worst.flipped)
			}

			// The batched path ends where the stepped one did.
			p := m.NewSequence()
			got, err := p.Prefill(toks, 0)
			require.NoError(t, err)
			cos, _, _ := compare(got, want[len(toks)-1])
			assert.GreaterOrEqual(t, cos, minCosine, "prefill: cosine")
		})
	}
}

// TestGreedyText: 200 greedy tokens (64 for gemma3-tiny: positions) from
// "Once upon a time", end of generation ignored on both sides, must be
// llama.cpp's tokens exactly.
func TestGreedyText(t *testing.T) {
	l := reftest.Lib(t)
	for _, tg := range targets(t, l) {
		t.Run(tg.name, func(t *testing.T) {
			_, n := positions(tg.name)
			path := tg.path
			rm := reftest.Model(t, l, path)
			prompt, err := rm.Tokenize("Once upon a time", true, false)
			require.NoError(t, err)
			rc := reftest.Context(t, rm, ref.ContextConfig{NCtx: refContext})
			want, err := rc.Greedy(prompt, n, true)
			require.NoError(t, err)

			m := loadOurs(t, path, 2)
			got := greedy(t, m.NewSequence(), prompt, n)
			same := 0
			for same < n && got[same] == want[same] {
				same++
			}
			t.Logf("greedy: first %d of %d tokens equal llama.cpp's", same, n)
			if tg.name == "stories260K-F32" {
				// The text quoted in ../shared/models/README.md.
				text, err := rm.Detokenize(append(prompt, got...), true, false)
				require.NoError(t, err)
				assert.True(t, strings.HasPrefix(strings.TrimPrefix(text, " "), storiesReadmeText), "greedy text: %q", text)
			}
			if same == n {
				return
			}
			wantText, _ := rm.Detokenize(want, false, false)
			gotText, _ := rm.Detokenize(got, false, false)
			t.Logf("llama.cpp: %q\nours:      %q", wantText, gotText)
			if gap, known := knownOrderGap(tg.name); known {
				t.Logf("KNOWN GAP (%s)", gap)
				return
			}
			t.Errorf("greedy text differs from llama.cpp's at token %d", same)
		})
	}
}

// greedy prefills prompt and decodes n tokens, each the first argmax.
func greedy(t *testing.T, s *model.Sequence, prompt []int32, n int) []int32 {
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

// bitsOf returns the float32 bit patterns of x.
func bitsOf(x []float32) []uint32 {
	out := make([]uint32, len(x))
	for i, v := range x {
		out[i] = math.Float32bits(v)
	}
	return out
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

// topTwo returns the indices of the largest and second largest values.
func topTwo(x []float32) (first, second int) {
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
