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
		var buf bytes.Buffer
		if err := gguf.Write(&buf, kv, tensors); err != nil {
			t.Fatal(err)
		}
		file, err := gguf.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Load(file, Options{Threads: 1})
		if err != nil {
			return
		}
		defer m.Close()
		if _, err := m.NewStep().Step(1, 0); err != nil {
			t.Fatalf("loaded model cannot step: %v", err)
		}
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
		var buf bytes.Buffer
		if err := gguf.Write(&buf, kv, tensors); err != nil {
			t.Fatal(err)
		}
		file, err := gguf.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Load(file, Options{Threads: 1})
		if err != nil {
			return
		}
		defer m.Close()
		if _, err := m.NewStep().Step(1, 0); err != nil {
			t.Fatalf("loaded model cannot step: %v", err)
		}
	})
}
