package host_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// BenchmarkStep measures one decode step through the host (copy of the
// logits or of the top-40 candidates, plus one call) against a native Go
// argmax over the same logits; overhead-full-step adds a StepDeadline.
// Ratios: go test -bench Step ./host.
func BenchmarkStep(b *testing.B) {
	h := newHost(b, host.NewConfig())
	guests := []struct {
		name, module, config string
		step                 bool
	}{
		{"overhead-full", "nop", "", false}, {"overhead-full-step", "nop", "", true}, {"wat-full", "greedy", "", false},
		{"wat-full-unrolled8", "greedy8", "", false}, {"wat-top40", "topn", "", false},
		{"go-full", "greedy_go", "", false}, {"go-top40", "greedy_go", `{"top_n":"40"}`, false},
	}
	for _, n := range []int{32000, 151936} {
		logits := randomLogits(1, n)
		b.Run("vocab="+strconv.Itoa(n)+"/native-argmax", func(b *testing.B) {
			b.ReportAllocs()
			var sink int32
			for b.Loop() {
				sink += argmax(logits)
			}
			_ = sink
		})
		for _, g := range guests {
			b.Run("vocab="+strconv.Itoa(n)+"/"+g.name, func(b *testing.B) {
				s := newSampler(b, enginetest.NewTokenVocab(n, nil), load(b, h, g.module, host.LoadOptions{Config: []byte(g.config)}))
				if g.step {
					s.SetStepDeadline(host.NewStepDeadline(time.Second))
				}
				require.NoError(b, s.Reset(0, nil))
				b.ReportAllocs()
				for b.Loop() {
					id, err := s.Sample(logits)
					if err != nil {
						b.Fatal(err)
					}
					s.Accept(id)
				}
			})
		}
	}
}

// BenchmarkInstantiate measures a new instance from the compiled module
// (instantiate, realizar_init, one realizar_reset, close), as a Session's
// first turn pays it; BenchmarkCompile measures validating and compiling
// the module in a fresh Host.
func BenchmarkInstantiate(b *testing.B) {
	h := newHost(b, host.NewConfig())
	v := enginetest.NewTokenVocab(32000, nil)
	for _, module := range []string{"greedy", "greedy_go"} {
		p := load(b, h, module, host.LoadOptions{})
		b.Run(module, func(b *testing.B) {
			for b.Loop() {
				s, err := host.NewSampler(v, p)
				require.NoError(b, err)
				require.NoError(b, s.Reset(0, nil))
				require.NoError(b, s.Close())
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	ctx := context.Background()
	for _, module := range []string{"greedy", "greedy_go"} {
		wasm := wasmFile(b, module)
		b.Run(module, func(b *testing.B) {
			for b.Loop() {
				h, err := host.New(ctx, host.NewConfig())
				require.NoError(b, err)
				_, err = h.Load(ctx, wasm, host.LoadOptions{})
				require.NoError(b, err)
				require.NoError(b, h.Close(ctx))
			}
		})
	}
}

// BenchmarkMaskStep measures one decode step of an ABI 2 mask-mode
// processor (testdata/mask.wat, which keeps its mask in its memory and
// updates two bits a step) followed by the top-40 sampler, against the
// sampler alone: the difference is the processor's per-step cost — the
// call, reading ceil(n_vocab/32) words from guest memory and applying them
// to the logits. sparse allows six tokens (the host writes -Inf over the
// whole vocabulary), dense allows every token, none answers "no mask".
//
//	go test -run '^$' -bench MaskStep ./host
func BenchmarkMaskStep(b *testing.B) {
	h := newHost(b, host.NewConfig())
	top := load(b, h, "topn", host.LoadOptions{})
	mask := load(b, h, "mask", host.LoadOptions{})
	for _, n := range []int{32000, 151936} {
		v := enginetest.NewTokenVocab(n, nil, int32(n-1))
		logits := randomLogits(1, n)
		for _, tc := range []struct {
			name  string
			seed  uint64
			chain []*host.Plugin
		}{
			{"sampler-alone", 0, nil},
			{"mask-sparse", 0, []*host.Plugin{mask}},
			{"mask-dense", 7, []*host.Plugin{mask}},
			{"mask-none", 6, []*host.Plugin{mask}},
		} {
			b.Run("vocab="+strconv.Itoa(n)+"/"+tc.name, func(b *testing.B) {
				s := newSampler(b, v, top, tc.chain...)
				require.NoError(b, s.Reset(tc.seed, nil))
				work := make([]float32, n)
				b.ReportAllocs()
				for b.Loop() {
					copy(work, logits) // the Session hands each step a fresh copy
					id, err := s.Sample(work)
					if err != nil {
						b.Fatal(err)
					}
					s.Accept(id)
				}
			})
		}
	}
}
