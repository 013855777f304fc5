package arch

import "github.com/realizar-host/realizar-host/gguf"

// phi3: Phi-3, Phi-3.5 and Phi-4-mini (see BlockPhi3).
func init() {
	Register(Arch{
		Name:    "phi3",
		Family:  "Phi-3",
		Models:  "Phi-3, Phi-3.5, Phi-4-mini",
		Rope:    RopeNeox,
		Block:   BlockPhi3,
		GPU:     true,
		Sliding: SlidingIgnored,
		Vocab:   "ggml-vocab-phi-3.gguf",
		Presets: []Fixture{
			// A 2-layer phi3 shaped as Phi-4-mini is, in small: n_embd 256,
			// n_ff 512 (ffn_up 1024 rows: gate, then up), 4 heads of 64 with
			// 48 rotated (partial rotary 0.75), 2 KV heads, fused attn_qkv,
			// LongRoPE factors over an original context of 256 in a context
			// of 1024 (a context per sequence above 256 takes the long
			// factors), rope.scaling.attn_factor 1.19 (Phi-3-128k's
			// sqrt(1 + ln 32/ln 4096)), untied output, F32 (≈ 70 MB with the
			// 32064-token phi-3 vocab).
			{Name: "fixture-phi3-tiny", Embd: 256, FF: 512, Layers: 2, Heads: 4, HeadsKV: 2,
				Context: 1024, RopeBase: 10000, RMSEps: 1e-5, RopeDims: 48, LongRoPE: true, RopeOrigContext: 256,
				RopeAttnFactor: 1.19, Seed: 9, Type: gguf.TypeF32},
		},
	})
}
