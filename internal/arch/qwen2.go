package arch

import "github.com/realizar-host/realizar-host/gguf"

// qwen2: Qwen2 and Qwen2.5, the llama block with Q/K/V biases (present as
// tensors) and NEOX RoPE.
func init() {
	Register(Arch{
		Name:   "qwen2",
		Family: "Qwen2",
		Models: "Qwen2, Qwen2.5",
		Rope:   RopeNeox,
		Block:  BlockLlama,
		Quant:  Quant{Size70B: At80Layers},
		GPU:    true,
		Vocab:  "ggml-vocab-qwen2.gguf",
		Presets: []Fixture{
			// A 2-layer qwen2 with QKV biases and a tied output: n_embd 256,
			// n_ff 1024, 4 heads, 2 KV heads, context 512, rope base 1e6,
			// F32 (≈ 160 MB with the 151936-token qwen2 vocab).
			{Name: "fixture-qwen2-tiny", Embd: 256, FF: 1024, Layers: 2, Heads: 4, HeadsKV: 2,
				Context: 512, RopeBase: 1e6, RMSEps: 1e-6, QKVBias: true, TiedOutput: true, Seed: 3, Type: gguf.TypeF32},
		},
	})
}
