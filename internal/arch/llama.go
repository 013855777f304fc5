package arch

import "github.com/realizar-host/realizar-host/gguf"

// llama: LLaMA 1–3, Mistral and TinyLlama files (GGUF labels them llama):
// the shared block with adjacent-pair RoPE.
func init() {
	Register(Arch{
		Name:   "llama",
		Family: "LLaMA",
		Models: "LLaMA 1–3, Mistral, TinyLlama",
		Rope:   RopeNorm,
		Block:  BlockLlama,
		Quant:  Quant{Size70B: At80LayersGQA},
		GPU:    true,
		Presets: []Fixture{
			// A 2-layer llama for unit tests: n_embd 256, n_ff 768, 4
			// heads, 2 KV heads, context 512, untied output, F32 (≈ 70 MB
			// with the 32000-token llama vocab).
			{Name: "fixture-tiny", Embd: 256, FF: 768, Layers: 2, Heads: 4, HeadsKV: 2,
				Context: 512, RopeBase: 10000, RMSEps: 1e-5, Seed: 1, Type: gguf.TypeF32},
			// tiny with YaRN RoPE scaling, factor 4 over an original context
			// of 128 positions (its 512 = 4·128, as Qwen2.5's 128k files
			// extend 32k): the ramp between extrapolated and interpolated
			// angles covers pairs 0–11 of 32.
			{Name: "fixture-tiny-yarn", Embd: 256, FF: 768, Layers: 2, Heads: 4, HeadsKV: 2,
				Context: 512, RopeBase: 10000, RMSEps: 1e-5, RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 128,
				Seed: 8, Type: gguf.TypeF32},
			// A 2-layer llama whose widths are not multiples of 256 (n_embd
			// 288, n_ff 800, 6 heads of 48, 2 KV heads), so a Q4_K_M
			// quantization falls back to Q5_0/Q8_0 for its matrices.
			{Name: "fixture-odd", Embd: 288, FF: 800, Layers: 2, Heads: 6, HeadsKV: 2,
				Context: 512, RopeBase: 10000, RMSEps: 1e-5, Seed: 2, Type: gguf.TypeF32},
			// A 110M-class llama for benchmarks: n_embd 768, n_ff 2048, 12
			// layers, 12 heads, context 1024, F32 (≈ 540 MB).
			{Name: "fixture-m110", Embd: 768, FF: 2048, Layers: 12, Heads: 12, HeadsKV: 12,
				Context: 1024, RopeBase: 10000, RMSEps: 1e-5, Seed: 4, Type: gguf.TypeF32},
			// TinyLlama-1.1B's shape, for benchmarks: n_embd 2048, n_ff
			// 5632, 22 layers, 32 heads, 4 KV heads, context 2048, F16
			// (≈ 2.2 GB).
			{Name: "fixture-tinyllama-1b", Embd: 2048, FF: 5632, Layers: 22, Heads: 32,
				HeadsKV: 4, Context: 2048, RopeBase: 10000, RMSEps: 1e-5, Seed: 5, Type: gguf.TypeF16},
			// Llama-2-7B's shape, for GPU benchmarks: n_embd 4096, n_ff
			// 11008, 32 layers, 32 heads, 32 KV heads, context 4096, untied
			// output over the 32000-token llama vocab, F16 (≈ 13.5 GB as a
			// float file, so write it quantized: fixture.GenerateQuantized
			// gives a 3.9 GB Q4_K_M directly).
			{Name: "fixture-llama2-7b", Embd: 4096, FF: 11008, Layers: 32, Heads: 32,
				HeadsKV: 32, Context: 4096, RopeBase: 10000, RMSEps: 1e-5, Seed: 14, Type: gguf.TypeF16},
		},
	})
}
