package plugins_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// wholeConfigs take the full logits with top_k 0 (or top_k >= n_vocab),
// the configs where the C build walks the vocabulary in buckets instead
// of sorting it (standard.c, whole_vocab).
var wholeConfigs = []string{
	`{"top_k":0}`,
	`{"top_k":0,"top_p":1}`,
	`{"top_k":0,"top_p":1,"min_p":0}`,
	`{"top_k":0,"top_p":1,"min_p":0,"temperature":3}`,
	`{"top_k":0,"top_p":1,"min_p":0,"temperature":0.05}`,
	`{"top_k":0,"top_p":0.5,"min_p":0,"temperature":1.7}`,
	`{"top_k":0,"top_p":0.999999,"min_p":1e-9,"temperature":1}`,
	`{"top_k":0,"top_p":0,"temperature":0.8}`,
	`{"top_k":0,"min_p":1,"temperature":2}`,
	`{"top_k":100000,"top_p":0.9,"min_p":0.01}`,
	`{"top_k":0,"repeat_penalty":1.3,"frequency_penalty":0.5,"logit_bias":{"3":4,"5":-2}}`,
	`{"top_k":0,"top_p":0.99,"min_p":0,"temperature":150}`,
}

// wholeLogits are logit shapes that reach every branch of the bucket walk:
// a long tail, sharp peaks, ties, spreads above and below the cut-off of
// 40, a flat vocabulary, non-finite values (the full-sort fallback).
var wholeLogits = []struct {
	name string
	gen  func(r *abi.RNG, n int) []float32
}{
	{"tail", randomLogits},
	{"peaked", func(r *abi.RNG, n int) []float32 {
		out := randomLogits(r, n)
		for range 3 {
			out[int(r.Uniform()*float64(n))] += float32(6 + 10*r.Uniform())
		}
		return out
	}},
	{"wide", func(r *abi.RNG, n int) []float32 { // spread ~90: many ids never looked at
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(90*r.Uniform() - 60)
		}
		return out
	}},
	{"ties", func(r *abi.RNG, n int) []float32 { // few distinct values: ties inside buckets
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(int(r.Uniform()*6)) * 0.5
		}
		return out
	}},
	{"flat", func(r *abi.RNG, n int) []float32 { // within 1e-3: the sum crosses many binades
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(1 + 1e-3*r.Uniform())
		}
		return out
	}},
	{"equal", func(r *abi.RNG, n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = -2
		}
		return out
	}},
	{"zeros", func(r *abi.RNG, n int) []float32 { // +0 and -0 tie
		out := make([]float32, n)
		for i := range out {
			if r.Uniform() < 0.5 {
				out[i] = float32(math.Copysign(0, -1))
			} else {
				out[i] = float32(-r.Uniform())
			}
		}
		return out
	}},
	{"huge", func(r *abi.RNG, n int) []float32 { // d overflows float32 for some ids
		out := make([]float32, n)
		for i := range out {
			out[i] = float32((2*r.Uniform() - 1) * 3e38)
		}
		return out
	}},
	{"nan", func(r *abi.RNG, n int) []float32 {
		out := randomLogits(r, n)
		out[int(r.Uniform()*float64(n))] = float32(math.NaN())
		return out
	}},
	{"inf", func(r *abi.RNG, n int) []float32 {
		out := randomLogits(r, n)
		out[int(r.Uniform()*float64(n))] = negInf
		out[int(r.Uniform()*float64(n))] = posInf
		return out
	}},
	{"masked", func(r *abi.RNG, n int) []float32 { // ids masked to -Inf (ignore_eos, a grammar); one stays finite
		out := randomLogits(r, n)
		for range min(n-1, 1+int(r.Uniform()*3)) {
			out[int(r.Uniform()*float64(n))] = negInf
		}
		if n > 0 && math.IsInf(float64(out[0]), -1) {
			out[0] = 0
		}
		return out
	}},
	{"all-masked", func(r *abi.RNG, n int) []float32 {
		out := randomLogits(r, n)
		for i := range out {
			out[i] = negInf
		}
		return out
	}},
}

// TestWholeVocabulary: with the full logits and top_k 0, the C build
// chooses the tokens the native chain (which sorts the whole vocabulary)
// chooses, for every config and logit shape, at several vocabulary sizes.
func TestWholeVocabulary(t *testing.T) {
	h := newHost(t, host.NewConfig())
	for _, n := range []int{1, 2, 9, 3000} {
		v := enginetest.NewTokenVocab(n, nil)
		for k, cfg := range wholeConfigs {
			if n < 6 && strings.Contains(cfg, "logit_bias") {
				continue // its ids are outside the vocabulary
			}
			for _, lg := range wholeLogits {
				t.Run(fmt.Sprintf("n=%d/%d/%s", n, k, lg.name), func(t *testing.T) {
					steps := 40
					if n < 10 {
						steps = 10
					}
					c := newSampler(t, v, load(t, h, "standard", cfg))
					ref := nativeChain(t, cfg, v.Size())
					prompt := []int32{0, int32(n - 1)}
					require.NoError(t, c.Reset(uint64(k+1), prompt))
					ref.Reset(uint64(k+1), prompt)
					r := abi.NewRNG(uint64(n*100 + k))
					prev := int32(-1)
					for step := range steps {
						logits := lg.gen(&r, n)
						idC := sample(t, c, logits)
						idR := refSample(ref, prev, logits)
						require.Equal(t, idR, idC, "step %d", step)
						prev = idR
					}
				})
			}
		}
	}
}

// TestWholeVocabularyLarge: the same at a real vocabulary size, a few steps.
func TestWholeVocabularyLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large vocabulary")
	}
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(151936, nil)
	for k, cfg := range wholeConfigs[:4] {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			c := newSampler(t, v, load(t, h, "standard", cfg))
			ref := nativeChain(t, cfg, v.Size())
			require.NoError(t, c.Reset(7, nil))
			ref.Reset(7, nil)
			r := abi.NewRNG(uint64(k))
			prev := int32(-1)
			for step := range 6 {
				logits := wholeLogits[step%3].gen(&r, v.Size())
				idC := sample(t, c, logits)
				idR := refSample(ref, prev, logits)
				require.Equal(t, idR, idC, "step %d", step)
				prev = idR
			}
		})
	}
}
