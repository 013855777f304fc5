package plugins_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// realTokenizer loads a real vocabulary: "llama-spm" (32,000 tokens,
// embedded in package fixture) or "qwen2" (151,936 byte-level BPE tokens,
// llama.cpp's ggml-vocab-qwen2.gguf from $LLAMAREF_DIR/vocab or
// <repo>/.cache/llamaref/vocab; skipped without it, except under CI=true).
func realTokenizer(t testing.TB, name string) *tokenizer.Tokenizer {
	t.Helper()
	if name == "llama-spm" {
		f, err := fixture.LlamaVocab()
		require.NoError(t, err)
		tok, err := tokenizer.FromGGUF(f)
		require.NoError(t, err)
		return tok
	}
	tok, err := tokenizer.Open(testenv.VocabFile(t, "ggml-vocab-"+name+".gguf"))
	require.NoError(t, err)
	return tok
}

func jsonModeFor(tok *tokenizer.Tokenizer, maxTokens int) string {
	return string(plugins.JSONMode{EOG: tok.EOG(), Control: tok.Control(), MaxTokens: maxTokens}.Config())
}

// enders marks the tokens that close a container or end the turn.
func enders(tok *tokenizer.Tokenizer) []bool {
	out := make([]bool, tok.Size())
	for id := range out {
		p := tok.Piece(int32(id))
		out[id] = tok.IsEOG(int32(id)) || strings.ContainsAny(string(p), "]}")
	}
	return out
}

// longLogits are random logits that disfavour closing and ending (by 4),
// so that a turn goes deep and long and its budget has to close it.
func longLogits(r *abi.RNG, end []bool) []float32 {
	l := randomLogits(r, len(end))
	for id, e := range end {
		if e {
			l[id] -= 4
		}
	}
	return l
}

// noCache adds "cache": false to a json config.
func noCache(config string) string { return strings.TrimSuffix(config, "}") + `,"cache":false}` }

// TestJSONCacheAgrees: the masks kept by state are the masks computed
// afresh, step for step, over a long random generation.
func TestJSONCacheAgrees(t *testing.T) {
	tok := realTokenizer(t, "llama-spm")
	h := newHost(t, host.NewConfig())
	for _, anyValue := range []bool{false, true} {
		cfg := string(plugins.JSONMode{EOG: tok.EOG(), Control: tok.Control(), AnyValue: anyValue, MaxTokens: 200}.Config())
		var samplers [2]*host.Sampler
		for k, c := range []string{cfg, noCache(cfg)} {
			s, err := host.NewSampler(tok, load(t, h, "standard", `{"temperature":1.2,"top_k":40}`), load(t, h, "json", c))
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			samplers[k] = s
		}
		for seed := range uint64(2) {
			for _, s := range samplers {
				require.NoError(t, s.Reset(seed, []int32{1}))
			}
			r := abi.NewRNG(seed)
			end := enders(tok)
			for step := range 200 {
				raw := longLogits(&r, end)
				var got [2][]float32
				var ids [2]int32
				for k, s := range samplers {
					got[k] = append([]float32(nil), raw...)
					id, err := s.Sample(got[k])
					require.NoError(t, err)
					ids[k] = id
				}
				require.Equal(t, got[0], got[1], "seed %d step %d", seed, step)
				require.Equal(t, ids[0], ids[1])
				if tok.IsEOG(ids[0]) {
					if !anyValue { // a top-level number may end at once
						assert.Greater(t, step, 150, "the generation is long")
					}
					break
				}
				for _, s := range samplers {
					s.Accept(ids[0])
				}
			}
		}
	}
}

// TestJSONRealVocab: over a real vocabulary, with random logits at a high
// temperature (a model that knows nothing of JSON), every turn's text is
// a JSON object: ended by an end-of-generation token or by the budget.
// The instance starts within the default init deadline and memory cap.
func TestJSONRealVocab(t *testing.T) {
	for _, name := range []string{"llama-spm", "qwen2"} {
		t.Run(name, func(t *testing.T) {
			tok := realTokenizer(t, name)
			h := newHost(t, host.NewConfig())
			sp := load(t, h, "standard", `{"temperature":1.5,"top_k":40}`)
			pl := load(t, h, "json", jsonModeFor(tok, 48))
			for seed := range uint64(6) {
				s, err := host.NewSampler(tok, sp, pl)
				require.NoError(t, err)
				start := time.Now()
				require.NoError(t, s.Reset(seed, []int32{1}))
				assert.Less(t, time.Since(start), host.DefaultInitTimeout, "init")
				r := abi.NewRNG(seed)
				end := enders(tok)
				var ids []int32
				for range 48 {
					id, err := s.Sample(longLogits(&r, end))
					require.NoError(t, err)
					if tok.IsEOG(id) {
						break
					}
					s.Accept(id)
					ids = append(ids, id)
				}
				require.NoError(t, s.Close())
				text := tok.Decode(ids)
				var obj map[string]any
				require.NoError(t, json.Unmarshal(text, &obj), "seed %d: %q", seed, text)
			}
		})
	}
}

// BenchmarkJSONStep measures one step of json before greedy on a real
// vocabulary, through the host (copy in, the call, the edits applied), in
// a string (the plain tokens allowed wholesale) and between values (the
// template of n_vocab edits), with the cache of masks by state and without
// (every step computed afresh); greedy alone is the yardstick.
//
//	go test -run '^$' -bench JSONStep -benchtime 2000x ./internal/plugins
func BenchmarkJSONStep(b *testing.B) {
	for _, name := range []string{"llama-spm", "qwen2"} {
		tok := realTokenizer(b, name)
		h := newHost(b, host.NewConfig())
		n := tok.Size()
		r := abi.NewRNG(1)
		stream := make([][]float32, 16)
		for i := range stream {
			stream[i] = randomLogits(&r, n)
		}
		enc := func(s string) []int32 { return tok.Encode(s, tokenizer.EncodeOptions{}) }
		cases := []struct {
			name   string
			prefix string
			cycle  []int32 // accepted in turn, keeping the state steady
		}{
			{"greedy-alone", "", nil},
			{"in-string", `{"a": "`, enc(" the")[len(enc(" the"))-1:]},
			{"between-values", `{"a": [`, append(enc("0"), enc(",")...)},
		}
		for _, c := range cases {
			for _, cached := range []bool{true, false} {
				if !cached && c.cycle == nil {
					continue
				}
				label := c.name
				cfg := jsonModeFor(tok, 0)
				if !cached {
					label, cfg = label+"-no-cache", noCache(cfg)
				}
				b.Run("vocab="+name+"/"+label, func(b *testing.B) {
					var procs []*host.Plugin
					if c.cycle != nil {
						procs = append(procs, load(b, h, "json", cfg))
					}
					s, err := host.NewSampler(tok, load(b, h, "greedy", ""), procs...)
					require.NoError(b, err)
					b.Cleanup(func() { _ = s.Close() })
					require.NoError(b, s.Reset(1, []int32{1}))
					scratch := make([]float32, n)
					for _, id := range tok.Encode(c.prefix, tokenizer.EncodeOptions{}) {
						copy(scratch, stream[0])
						_, err := s.Sample(scratch)
						require.NoError(b, err)
						s.Accept(id)
					}
					i := 0
					for b.Loop() {
						copy(scratch, stream[i%len(stream)])
						id, err := s.Sample(scratch)
						if err != nil {
							b.Fatal(err)
						}
						if c.cycle != nil {
							id = c.cycle[i%len(c.cycle)]
						}
						s.Accept(id)
						i++
					}
				})
			}
		}
	}
}

// BenchmarkJSONInit measures what a turn's first step pays for JSON mode:
// instantiate, realizar_init (every piece read and classified), reset,
// close. It must stay well inside the 2 s init deadline at 152k tokens.
//
//	go test -run '^$' -bench JSONInit -benchtime 10x ./internal/plugins
func BenchmarkJSONInit(b *testing.B) {
	for _, name := range []string{"llama-spm", "qwen2"} {
		tok := realTokenizer(b, name)
		h := newHost(b, host.NewConfig())
		p := load(b, h, "json", jsonModeFor(tok, 0))
		g := load(b, h, "greedy", "")
		b.Run("vocab="+name, func(b *testing.B) {
			for b.Loop() {
				s, err := host.NewSampler(tok, g, p)
				require.NoError(b, err)
				require.NoError(b, s.Reset(0, []int32{1}))
				require.NoError(b, s.Close())
			}
		})
	}
}
