package arch

import "github.com/realizar-host/realizar-host/gguf"

// qwen3moe: Qwen3-MoE, qwen3's attention with a mixture of experts in place
// of the feed-forward.
func init() {
	Register(Arch{
		Name:   "qwen3moe",
		Family: "Qwen3-MoE",
		Models: "Qwen3-MoE",
		Rope:   RopeNeox,
		Block:  BlockLlama,
		GPU:    true,
		QKNorm: true,
		MoE:    true,
		Vocab:  "ggml-vocab-qwen2.gguf",
		Presets: []Fixture{
			// A 2-layer qwen3moe with qwen3-tiny's attention (4 heads of 128
			// over n_embd 256, 2 KV heads, tied output, rope base 1e6) and 8
			// experts of width 256 per layer, 2 routed per token
			// (feed_forward_length 768, as a dense layer of the same active
			// width would be written), F32 (≈ 170 MB with the 151936-token
			// qwen2 vocab, which Qwen3 uses).
			{Name: "fixture-qwen3moe-tiny", Embd: 256, FF: 768, Layers: 2, Heads: 4, HeadsKV: 2,
				KeyLength: 128, Experts: 8, ExpertsUsed: 2, ExpertFF: 256, Context: 512, RopeBase: 1e6, RMSEps: 1e-6,
				TiedOutput: true, Seed: 7, Type: gguf.TypeF32},
		},
	})
}
