package arch

import "github.com/realizar-host/realizar-host/gguf"

// qwen3: dense Qwen3, qwen2's block without biases and with a per-head
// RMSNorm of Q and K; head_dim (attention.key_length) may differ from
// n_embd/n_head.
func init() {
	Register(Arch{
		Name:   "qwen3",
		Family: "Qwen3",
		Models: "Qwen3 (dense)",
		Rope:   RopeNeox,
		Block:  BlockLlama,
		GPU:    true,
		QKNorm: true,
		Vocab:  "ggml-vocab-qwen2.gguf",
		Presets: []Fixture{
			// A 2-layer qwen3 with a tied output and heads wider than
			// n_embd/n_head, as in Qwen3: n_embd 256, n_ff 768, 4 heads of
			// 128 (Q is 512 wide), 2 KV heads, context 512, rope base 1e6,
			// F32 (≈ 160 MB with the 151936-token qwen2 vocab, which Qwen3
			// uses).
			{Name: "fixture-qwen3-tiny", Embd: 256, FF: 768, Layers: 2, Heads: 4, HeadsKV: 2,
				KeyLength: 128, Context: 512, RopeBase: 1e6, RMSEps: 1e-6, TiedOutput: true, Seed: 6, Type: gguf.TypeF32},
		},
	})
}
