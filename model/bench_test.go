package model

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/internal/quant"
)

// benchSpec is a Q4_K model big enough for the matrix products to dominate
// (≈ 25 MB of weights) and small enough to build in a second.
func benchSpec() spec {
	return spec{arch: "llama", embd: 1024, ffn: 2816, layers: 4, heads: 16, kvHeads: 4,
		vocab: 8192, ctx: 1024, seed: 7, weight: quant.Q4_K, embdType: quant.Q4_K}
}

// benchMixSpec is benchSpec with llama-quantize's Q4_K_M mix of four
// layers: output, and attn_v and ffn_down of layers 2 and 3
// (use_more_bits), in Q6_K.
func benchMixSpec() spec {
	s := benchSpec()
	s.types = map[string]quant.Type{"output.weight": quant.Q6_K}
	for _, l := range []int{2, 3} {
		s.types[fmt.Sprintf("blk.%d.attn_v.weight", l)] = quant.Q6_K
		s.types[fmt.Sprintf("blk.%d.ffn_down.weight", l)] = quant.Q6_K
	}
	return s
}

// benchMoESpec is a Q4_K qwen3moe whose experts dominate what a token
// reads: 32 experts of 512 per layer, 4 routed per token (≈ 7 MB of active
// weights of ≈ 42 MB in all, as Qwen3-30B-A3B reads about a tenth of its
// weights a token).
func benchMoESpec() spec {
	return spec{arch: "qwen3moe", embd: 1024, ffn: 2048, layers: 2, heads: 16, kvHeads: 4, headDim: 64,
		experts: 32, used: 4, expertFFN: 512, vocab: 8192, ctx: 1024, seed: 7, weight: quant.Q4_K, embdType: quant.Q4_K}
}

// weightBytes is the bytes of every matrix one token reads: in a MoE layer
// the router and ExpertsUsed experts.
func (m *Model) weightBytes() int64 {
	n := int64(len(m.output.data))
	for _, l := range m.layers {
		for _, w := range []*linear{&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down} {
			n += int64(len(w.data))
		}
		if l.moe != nil {
			e := &l.moe.exps[0]
			n += int64(len(l.moe.router.data)) +
				int64(m.cfg.ExpertsUsed)*int64(len(e.gate.data)+len(e.up.data)+len(e.down.data))
		}
	}
	return n
}

// BenchmarkDecode measures Step: one op is one token at positions cycling
// through 0..255. MB/s is weight bytes read per second.
func BenchmarkDecode(b *testing.B) {
	path := benchSpec().write(b)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			m := open(b, path, Options{Threads: threads})
			s := m.NewSequence()
			_, err := s.Reserve(256)
			require.NoError(b, err)
			b.SetBytes(m.weightBytes())
			b.ResetTimer()
			pos := 0
			for b.Loop() {
				if pos == 256 {
					pos = 0
				}
				if _, err := s.Step(int32(pos%m.cfg.Vocab), pos); err != nil {
					b.Fatal(err)
				}
				pos++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkDecodeFile is BenchmarkDecode on the GGUF file named by
// $REALIZAR_BENCH_MODEL (say the tinyllama-1b Q4_K_M fixture), after a
// 64-token prefill, positions cycling 64..319 (the cache's length then
// cycles too: every op is one Step). cpu-ns/op is the process's CPU time
// a token, at threads=1 the token's own work whatever else loads the
// machine. It does nothing without the variable.
func BenchmarkDecodeFile(b *testing.B) {
	const first, span = 64, 256
	path := os.Getenv("REALIZAR_BENCH_MODEL")
	if path == "" {
		b.Skip("REALIZAR_BENCH_MODEL names no model file")
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			m := open(b, path, Options{Threads: threads})
			s := m.NewSequence()
			_, err := s.Reserve(first + span)
			require.NoError(b, err)
			toks := make([]int32, first)
			for i := range toks {
				toks[i] = int32((i*37 + 1) % m.cfg.Vocab)
			}
			_, err = s.Prefill(toks, 0)
			require.NoError(b, err)
			b.SetBytes(m.weightBytes())
			b.ResetTimer()
			pos := first
			cpu := startCPU()
			for b.Loop() {
				if pos == first+span {
					pos = first
				}
				if _, err := s.Step(int32(pos%m.cfg.Vocab), pos); err != nil {
					b.Fatal(err)
				}
				pos++
			}
			cpu.report(b)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkDecodeMoE is BenchmarkDecode on benchMoESpec; MB/s counts the
// chosen experts' bytes only.
func BenchmarkDecodeMoE(b *testing.B) {
	path := benchMoESpec().write(b)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			m := open(b, path, Options{Threads: threads})
			s := m.NewSequence()
			_, err := s.Reserve(256)
			require.NoError(b, err)
			b.SetBytes(m.weightBytes())
			b.ResetTimer()
			pos := 0
			for b.Loop() {
				if pos == 256 {
					pos = 0
				}
				if _, err := s.Step(int32(pos%m.cfg.Vocab), pos); err != nil {
					b.Fatal(err)
				}
				pos++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkPrefill measures Prefill of 64 tokens from position 0: one op is
// one span; tok/s counts its tokens.
func BenchmarkPrefill(b *testing.B) {
	const span = 64
	path := benchSpec().write(b)
	toks := make([]int32, span)
	for i := range toks {
		toks[i] = int32(i*37) % 8192
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			m := open(b, path, Options{Threads: threads, BatchSize: span})
			s := m.NewSequence()
			b.SetBytes(m.weightBytes())
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Prefill(toks, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*span)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkPrefillFile measures Prefill of a 512-token prompt from
// position 0 on the GGUF file named by $REALIZAR_BENCH_MODEL (say the m110
// Q4_K_M fixture), in the passes of the model's default BatchSize, as
// `realizar-host bench --prompt-tokens 512` runs them: one op is the whole
// prompt; tok/s counts its tokens. It does nothing without the variable.
func BenchmarkPrefillFile(b *testing.B) {
	const prompt = 512
	path := os.Getenv("REALIZAR_BENCH_MODEL")
	if path == "" {
		b.Skip("REALIZAR_BENCH_MODEL names no model file")
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			m := open(b, path, Options{Threads: threads})
			toks := make([]int32, prompt)
			for i := range toks {
				toks[i] = int32((i*37 + 1) % m.cfg.Vocab)
			}
			s := m.NewSequence()
			_, err := s.Reserve(prompt)
			require.NoError(b, err)
			b.ResetTimer()
			cpu := startCPU()
			for b.Loop() {
				if _, err := s.Prefill(toks, 0); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
			b.ReportMetric(float64(b.N*prompt)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// cpuClock measures a benchmark's process CPU time from startCPU to
// report, which reports it per op as cpu-ns/op: at threads=1 the pass's own
// time, which, on a machine other processes load, wall time overstates by
// the time they hold the core.
type cpuClock struct {
	t0 int64
	ok bool
}

func startCPU() cpuClock {
	t0, ok := processTime()
	return cpuClock{t0, ok}
}

func (c cpuClock) report(b *testing.B) {
	if t1, _ := processTime(); c.ok && b.N > 0 {
		b.ReportMetric(float64(t1-c.t0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkDecodeBatch measures Batch decoding B sequences together,
// one token each per pass, at positions cycling through 0..255: one op is
// one pass; tok/s counts all B tokens (the aggregate). Compare with
// BenchmarkDecode's tok/s at the same threads.
func BenchmarkDecodeBatch(b *testing.B) {
	path := benchSpec().write(b)
	for _, threads := range []int{1, 2} {
		for _, batch := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("threads=%d/B=%d", threads, batch), func(b *testing.B) {
				m := open(b, path, Options{Threads: threads})
				seqs := make([]*Sequence, batch)
				for i := range seqs {
					seqs[i] = m.NewSequence()
					_, err := seqs[i].Reserve(256)
					require.NoError(b, err)
				}
				rows := make([]forward.Rows, batch)
				toks := make([]int32, batch)
				b.SetBytes(m.weightBytes())
				b.ResetTimer()
				pos := 0
				cpu := startCPU()
				for b.Loop() {
					if pos == 256 {
						pos = 0
					}
					for i, st := range seqs {
						toks[i] = int32((pos + i*31) % m.cfg.Vocab)
						rows[i] = forward.Rows{Sequence: st, Start: pos, Tokens: toks[i : i+1], Logits: true}
					}
					if err := seqs[0].Batch(rows); err != nil {
						b.Fatal(err)
					}
					pos++
				}
				cpu.report(b)
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}

// BenchmarkVerify measures Verify passes of R rows of one sequence (the
// last accepted token and R-1 drafts) at positions cycling through
// 0..255: one op is one pass; rows/s counts its R rows. R=1 is a Step.
// A pass's cost over BenchmarkDecode's op at the same threads is what a
// speculative decoder pays to check R-1 drafts.
func BenchmarkVerify(b *testing.B) {
	benchVerify(b, benchSpec(), []int{1, 2}, []int{1, 2, 4, 8, 16})
}

// BenchmarkVerifyQ4KM is BenchmarkVerify on one thread on benchMixSpec,
// where the Q6_K matrices take the batched row kernels (the Q4_K ones
// take panels).
func BenchmarkVerifyQ4KM(b *testing.B) {
	benchVerify(b, benchMixSpec(), []int{1}, []int{1, 2, 4, 8})
}

// BenchmarkVerifyFile is BenchmarkVerify on one thread on the GGUF file
// named by $REALIZAR_BENCH_MODEL (say the tinyllama-1b Q4_K_M fixture that
// `realizar-host fixture --preset tinyllama-1b --type Q4_K_M` writes): the
// 4-row over 1-row ratio of issue 31 is measured on it. It does nothing
// without the variable.
func BenchmarkVerifyFile(b *testing.B) {
	path := os.Getenv("REALIZAR_BENCH_MODEL")
	if path == "" {
		b.Skip("REALIZAR_BENCH_MODEL names no model file")
	}
	benchVerifyPath(b, path, []int{1}, []int{1, 2, 4, 8})
}

// benchVerify runs BenchmarkVerify's passes on the model s describes.
func benchVerify(b *testing.B, s spec, threadCounts, rowCounts []int) {
	benchVerifyPath(b, s.write(b), threadCounts, rowCounts)
}

// benchVerifyPath runs BenchmarkVerify's passes on the model file at path.
func benchVerifyPath(b *testing.B, path string, threadCounts, rowCounts []int) {
	for _, threads := range threadCounts {
		for _, rows := range rowCounts {
			b.Run(fmt.Sprintf("threads=%d/R=%d", threads, rows), func(b *testing.B) {
				m := open(b, path, Options{Threads: threads})
				s := m.NewSequence()
				_, err := s.Reserve(256 + rows)
				require.NoError(b, err)
				toks := make([]int32, 256+rows)
				for i := range toks {
					toks[i] = int32((i * 31) % m.cfg.Vocab)
				}
				_, err = s.Prefill(toks[:256], 0)
				require.NoError(b, err)
				b.SetBytes(m.weightBytes())
				b.ResetTimer()
				pos := 0
				cpu := startCPU()
				for b.Loop() {
					if pos == 256 {
						pos = 0
					}
					if _, err := s.Verify(toks[:pos+rows], pos); err != nil {
						b.Fatal(err)
					}
					pos++
				}
				cpu.report(b)
				b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
