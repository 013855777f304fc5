package plugins_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// BenchmarkPolicyStep measures one decode step of each policy through the
// real host: for a sampler the copy of the logits (or the native top-N
// selection) plus the call; for a stop policy the copy of the piece plus
// the call. The native argmax is the yardstick. Figures in BENCHMARKS.md:
//
//	go test -run '^$' -bench PolicyStep -benchtime 2000x ./internal/plugins
func BenchmarkPolicyStep(b *testing.B) {
	h := newHost(b, host.NewConfig())
	samplers := []struct{ name, module, config, processor string }{
		{"greedy", "greedy", "", ""},
		{"standard", "standard", "", ""},
		{"standard-penalties", "standard", `{"repeat_penalty":1.1,"frequency_penalty":0.1}`, ""},
		{"standard-full-bias", "standard", `{"logit_bias":{"5":1}}`, ""}, // full logits, guest top-k
		{"standard-top_k=0", "standard", `{"top_k":0}`, ""},              // full logits, buckets (whole_vocab)
		{"standard-top_k=0-top_p=1", "standard", `{"top_k":0,"top_p":1}`, ""},
		{"standard-xtc", "standard", `{"xtc_probability":0.5}`, ""},     // issue 23's stages, each on
		{"standard-dynatemp", "standard", `{"dynatemp_range":0.5}`, ""}, // top-N mode
		{"standard-top_n_sigma", "standard", `{"top_n_sigma":1}`, ""},   // full logits, sorted
		{"standard-mirostat", "standard", `{"mirostat":1}`, ""},         // full logits, top 100 (k past it: the top k)
		{"dry+standard", "standard", "", "dry"},
		{"standard-go", "standard-go", "", ""},
		{"mirostat-v2", "mirostat-v2", "", ""},
		{"dry+greedy", "greedy", "", "dry"},
	}
	for _, n := range []int{32000, 151936} {
		v := enginetest.NewTokenVocab(n, nil)
		r := abi.NewRNG(1)
		stream := make([][]float32, 16)
		for i := range stream {
			stream[i] = randomLogits(&r, n)
		}
		prefix := "vocab=" + strconv.Itoa(n) + "/"
		b.Run(prefix+"native-argmax", func(b *testing.B) {
			var sink int32
			i := 0
			for b.Loop() {
				sink += argmax(stream[i%len(stream)])
				i++
			}
			_ = sink
		})
		for _, sc := range samplers {
			b.Run(prefix+sc.name, func(b *testing.B) {
				var procs []*host.Plugin
				if sc.processor != "" {
					procs = append(procs, load(b, h, sc.processor, ""))
				}
				s := newSampler(b, v, load(b, h, sc.module, sc.config), procs...)
				prompt := make([]int32, 512)
				for i := range prompt {
					prompt[i] = int32(i * 7 % n)
				}
				require.NoError(b, s.Reset(1, prompt))
				scratch := make([]float32, n)
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					copy(scratch, stream[i%len(stream)]) // as the Session does
					id, err := s.Sample(scratch)
					if err != nil {
						b.Fatal(err)
					}
					s.Accept(id)
					i++
				}
			})
		}
		for _, name := range []string{"strings", "strings-go", "repetition", "max-time"} {
			b.Run(prefix+name, func(b *testing.B) {
				p := load(b, h, name, `{"stop":["</answer>","\n\nUser:"]}`)
				if name != "strings" && name != "strings-go" {
					p = load(b, h, name, "")
				}
				sp, err := host.NewStopPolicy(v, p)
				require.NoError(b, err)
				b.Cleanup(func() { _ = sp.Close() })
				require.NoError(b, sp.Reset())
				pieces := [][]byte{[]byte(" the"), []byte(" answer"), []byte(" is"), []byte("<"), []byte(" 42"), []byte("\n")}
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					if _, err := sp.Check(int32(i%n), pieces[i%len(pieces)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkInstantiate measures what a Session's first turn pays for a
// policy: instantiate, realizar_init, realizar_reset, close.
func BenchmarkInstantiate(b *testing.B) {
	h := newHost(b, host.NewConfig())
	v := enginetest.NewTokenVocab(32000, nil)
	for _, name := range []string{"greedy", "standard", "standard-go"} {
		p := load(b, h, name, "")
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s, err := host.NewSampler(v, p)
				require.NoError(b, err)
				require.NoError(b, s.Reset(0, []int32{1}))
				require.NoError(b, s.Close())
			}
		})
	}
}
