package arch

import "github.com/realizar-host/realizar-host/gguf"

// ernie4_5: Baidu's dense ERNIE 4.5 (0.3B), which llama.cpp runs with the
// llama block (RMSNorm, grouped-query attention, SwiGLU) and adjacent-pair
// RoPE; rope.dimension_sections is read there for the vision models only.
func init() {
	Register(Arch{
		Name:   "ernie4_5",
		Family: "ERNIE 4.5",
		Models: "ERNIE 4.5 (dense)",
		Rope:   RopeNorm,
		Block:  BlockLlama,
		Presets: []Fixture{
			// A 2-layer ernie4_5 shaped as ERNIE-4.5-0.3B is, in small: n_embd
			// 256, n_ff 768, 4 heads, 2 KV heads, context 512, rope base
			// 500000, tied output, F32 (≈ 40 MB with the 32000-token llama
			// vocab: ERNIE's own is SentencePiece too).
			{Name: "fixture-ernie4_5-tiny", Embd: 256, FF: 768, Layers: 2, Heads: 4, HeadsKV: 2,
				Context: 512, RopeBase: 500000, RMSEps: 1e-5, TiedOutput: true, Seed: 11, Type: gguf.TypeF32},
		},
	})
}
