package model

import (
	"bytes"
	"math"
	"testing"

	"github.com/realizar-host/realizar-host/gguf"
)

// FuzzLoad writes the tiny llama with fuzzed hyperparameters (the tensors
// stay those of tinySpec) and loads it from memory: Load must return an
// error or a Model whose Step runs, never panic or allocate by an unchecked
// count.
func FuzzLoad(f *testing.F) {
	f.Add(uint32(2), uint32(64), uint32(96), uint32(4), uint32(2), uint32(64), uint32(16), float32(1e-5), float32(10000))
	f.Add(uint32(1<<24), uint32(64), uint32(96), uint32(4), uint32(2), uint32(1<<24), uint32(16), float32(0), float32(1))
	f.Add(uint32(2), uint32(64), uint32(96), uint32(3), uint32(3), uint32(1), uint32(7), float32(math.NaN()), float32(-1))
	f.Add(uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), float32(0), float32(0))
	tmpl := tinySpec("llama")
	tensors := tmpl.tensors(f)
	f.Fuzz(func(t *testing.T, layers, embd, ffn, heads, kvHeads, ctx, keyLen uint32, eps, base float32) {
		kv := []gguf.KV{
			{Key: "general.architecture", Value: "llama"},
			{Key: "llama.block_count", Value: layers},
			{Key: "llama.embedding_length", Value: embd},
			{Key: "llama.feed_forward_length", Value: ffn},
			{Key: "llama.attention.head_count", Value: heads},
			{Key: "llama.attention.head_count_kv", Value: kvHeads},
			{Key: "llama.context_length", Value: ctx},
			{Key: "llama.attention.key_length", Value: keyLen},
			{Key: "llama.attention.layer_norm_rms_epsilon", Value: eps},
			{Key: "llama.rope.freq_base", Value: base},
		}
		loadOrRefuse(t, kv, tensors, Options{Threads: 1}, 1)
	})
}

// FuzzLoadMoE writes the tiny qwen3moe (8 experts of 32, 2 used) with
// fuzzed expert metadata and loads it: an error naming the key, or a Model
// whose Step runs; never a panic.
func FuzzLoadMoE(f *testing.F) {
	f.Add(uint32(8), uint32(2), uint32(32), uint32(96))
	f.Add(uint32(0), uint32(2), uint32(32), uint32(96))
	f.Add(uint32(8), uint32(9), uint32(32), uint32(96))
	f.Add(uint32(8), uint32(8), uint32(0), uint32(64))
	f.Add(uint32(1<<24), uint32(1<<24), uint32(1<<24), uint32(0))
	tmpl := tinySpec("llama")
	tinyMoE(&tmpl)
	tensors := tmpl.tensors(f)
	f.Fuzz(func(t *testing.T, experts, used, expertFFN, ffn uint32) {
		kv := tmpl.metadata()
		for i := range kv {
			switch kv[i].Key {
			case "qwen3moe.expert_count":
				kv[i].Value = experts
			case "qwen3moe.expert_used_count":
				kv[i].Value = used
			case "qwen3moe.expert_feed_forward_length":
				kv[i].Value = expertFFN
			case "qwen3moe.feed_forward_length":
				kv[i].Value = ffn
			}
		}
		loadOrRefuse(t, kv, tensors, Options{Threads: 1}, 1)
	})
}

// FuzzLoadPhi3 writes the tiny phi3 (fused attn_qkv and gate-up, LongRoPE
// factors of 6 pairs, 12 of 16 values rotated) with fuzzed RoPE metadata
// and context size: an error, or a Model whose Step runs; never a panic.
func FuzzLoadPhi3(f *testing.F) {
	f.Add(uint32(12), uint32(32), uint32(2047), float32(1.19), 0)
	f.Add(uint32(16), uint32(256), uint32(0), float32(1), 300)
	f.Add(uint32(18), uint32(0), uint32(1<<30), float32(0), -1)
	f.Add(uint32(11), uint32(1), uint32(1), float32(math.NaN()), 1<<40)
	tmpl := tinySpec("phi3")
	tinyPhi3(&tmpl)
	tensors := tmpl.tensors(f)
	base := tmpl.metadata()
	f.Fuzz(func(t *testing.T, ropeDims, origCtx, window uint32, attnFactor float32, ctxSize int) {
		kv := append([]gguf.KV(nil), base...)
		for i := range kv {
			switch kv[i].Key {
			case "phi3.rope.dimension_count":
				kv[i].Value = ropeDims
			case "phi3.rope.scaling.original_context_length":
				kv[i].Value = origCtx
			case "phi3.rope.scaling.attn_factor":
				kv[i].Value = attnFactor
			}
		}
		kv = append(kv, gguf.KV{Key: "phi3.attention.sliding_window", Value: window})
		loadOrRefuse(t, kv, tensors, Options{Threads: 1, ContextSize: ctxSize}, 2)
	})
}

// FuzzLoadGemma3 writes the tiny gemma3 (a sliding and a global layer) with
// fuzzed window, pattern, RoPE bases, softcap and layer count: an error,
// or a Model whose Step runs over more positions than the window; never a
// panic.
func FuzzLoadGemma3(f *testing.F) {
	f.Add(uint32(3), uint32(2), float32(10000), float32(0), uint32(2), false)
	f.Add(uint32(0), uint32(0), float32(0), float32(-1), uint32(1), true)
	f.Add(uint32(65), uint32(1<<30), float32(math.Inf(1)), float32(math.NaN()), uint32(3), true)
	f.Add(uint32(1), uint32(1), float32(1e-30), float32(1e-30), uint32(0), false)
	tmpl := tinySpec("gemma3")
	tinyGemma3(&tmpl)
	tensors := tmpl.tensors(f)
	base := tmpl.metadata()
	f.Fuzz(func(t *testing.T, window, pattern uint32, baseSWA, softcapV float32, layers uint32, flags bool) {
		kv := append([]gguf.KV(nil), base...)
		for i := range kv {
			switch kv[i].Key {
			case "gemma3.attention.sliding_window":
				kv[i].Value = window
			case "gemma3.attention.sliding_window_pattern":
				kv[i].Value = pattern
				if flags {
					kv[i].Value = []bool{pattern%2 == 1, pattern%3 == 1}[:min(2, int(pattern%3))]
				}
			case "gemma3.block_count":
				kv[i].Value = layers
			}
		}
		kv = append(kv, gguf.KV{Key: "gemma3.rope.freq_base_swa", Value: baseSWA},
			gguf.KV{Key: "gemma3.final_logit_softcapping", Value: softcapV})
		loadOrRefuse(t, kv, tensors, Options{Threads: 1}, 5)
	})
}

// loadOrRefuse writes kv and tensors as a GGUF and loads it with opts: a
// load error is the accepted outcome for fuzzed metadata; a model that
// loads must step through the first steps positions.
func loadOrRefuse(t *testing.T, kv []gguf.KV, tensors []gguf.Tensor, opts Options, steps int) {
	t.Helper()
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kv, tensors); err != nil {
		t.Fatal(err)
	}
	file, err := gguf.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(file, opts)
	if err != nil {
		return
	}
	defer m.Close()
	s := m.NewSequence()
	for pos := range steps {
		if _, err := s.Step(1, pos); err != nil {
			t.Fatalf("loaded model cannot step at %d: %v", pos, err)
		}
	}
}
