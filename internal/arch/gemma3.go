package arch

import "github.com/realizar-host/realizar-host/gguf"

// gemma3: Gemma 3's text models (see BlockGemma3), with qwen3's per-head
// Q/K norms. Its fixture carries the embedded LLaMA SentencePiece
// vocabulary: Gemma 3 uses a SentencePiece vocabulary too, and the
// reference bundle's only Gemma vocabulary (ggml-vocab-gemma-4.gguf, 262144
// tokens) is Gemma 4's, of another tokenizer model and too large for a
// fast fixture.
func init() {
	Register(Arch{
		Name:    "gemma3",
		Family:  "Gemma 3",
		Models:  "Gemma 3 (text)",
		Rope:    RopeNeox,
		Block:   BlockGemma3,
		GPU:     true,
		QKNorm:  true,
		Sliding: SlidingLayers,
		Presets: []Fixture{
			// A 6-layer gemma3 shaped as Gemma 3 is, in small: n_embd 256,
			// n_ff 512, 4 heads of 128 (Q is 512 wide) over one KV head,
			// layers 0-4 sliding and 5 global (llama.cpp's default pattern
			// of 6, the key absent), a window of 40 positions (less than the
			// parity suite's sequences), rope base 1e6 with linear scaling 8
			// on the global layer (as Gemma 3 4B and up) and the sliding
			// layers' default base of 10000, no logit softcap (as Gemma 3),
			// tied output, F32 (≈ 50 MB with the 32000-token llama vocab).
			{Name: "fixture-gemma3-tiny", Embd: 256, FF: 512, Layers: 6, Heads: 4, HeadsKV: 1,
				KeyLength: 128, Context: 512, RopeBase: 1e6, RMSEps: 1e-6, RopeScaling: "linear", RopeScaleFactor: 8,
				SlidingWindow: 40, TiedOutput: true, Seed: 10, Type: gguf.TypeF32},
		},
	})
}
