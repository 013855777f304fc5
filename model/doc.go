// Package model holds the CPU forward passes of the decoder-only
// architectures realizar-host runs: "llama" (also Mistral and TinyLlama
// files, which GGUF labels llama), "qwen2", "qwen3" (dense Qwen3),
// "qwen3moe" (Qwen3-MoE), "phi3" (Phi-3, Phi-3.5, Phi-4-mini) and "gemma3"
// (Gemma 3's text models).
//
// All share one transformer block parameterized by a Config decoded once
// from GGUF metadata: pre-RMSNorm, grouped-query attention over an f16 KV
// cache with rotary position embeddings, and a SwiGLU feed-forward. qwen2
// differs from llama only in its data: Q/K/V biases (present as tensors) and
// NEOX RoPE (chosen per architecture, as llama.cpp does). qwen3 has no
// biases and adds a per-head RMSNorm of Q and K (attn_q_norm, attn_k_norm,
// [head_dim] gains) after the projections and before RoPE; its head_dim
// (attention.key_length) may differ from n_embd/n_head, so Q is n_head·head_dim
// wide and attn_output maps that width back to n_embd. qwen3moe is qwen3's
// attention with a mixture of experts in place of the feed-forward: a
// router (ffn_gate_inp) soft-maxed over expert_count experts, the
// expert_used_count most probable chosen per token with their weights
// normalized to sum to one (llama.cpp always normalizes them for this
// architecture), and each chosen expert's SwiGLU from the merged 3-D tensors
// ffn_gate_exps, ffn_up_exps and ffn_down_exps, of which only the chosen
// experts' rows are read (moe.go). phi3 is llama's block with NEOX RoPE and
// two fused products: attn_qkv (Q's rows, then K's, then V's; separate
// attn_q/k/v load too) and ffn_up (the gate's n_ff rows, then up's, SwiGLU
// a row at a time as ggml_swiglu takes them). It rotates
// rope.dimension_count values of each head (partial rotary when fewer than
// head_dim), divides each pair's angle by LongRoPE's rope_factors_long or
// rope_factors_short (llama.cpp's rule: long when the context per sequence,
// Options.ContextSize padded to 256, exceeds
// rope.scaling.original_context_length), and scales the rotated Q by
// 1/sqrt(head_dim) before attention instead of the scores, as llama.cpp's
// graph does (the f16 rounding of Q then differs). attention.sliding_window
// is read and reported, not applied: llama.cpp disables Phi-3's window.
// gemma3 scales the token embeddings by sqrt(n_embd), normalizes each head
// of Q and K as qwen3 does, scales the rotated Q by 1/sqrt(head_dim) as phi3
// does (1/sqrt(n_embd/n_head) for the 62-layer 27B, as llama.cpp), gates its
// FFN with GELU (ggml's tanh approximation looked up in its f16 table, so
// the activation rounds as llama.cpp's), RMS-normalizes each sublayer's
// output (post_attention_norm, post_ffw_norm) before the residual add, and
// interleaves sliding-window and global layers: with
// attention.sliding_window set, the layers sliding_window_pattern marks (a
// count n: every layer but each n-th; 6 by default; or one flag per layer)
// attend to the last sliding_window positions only and rotate with
// rope.freq_base_swa (default 10000) unscaled, while the global layers
// attend to the whole context with rope.freq_base and the file's linear
// scaling. final_logit_softcapping, when the file has it, caps the logits
// at cap·tanh(x/cap) (glibc's tanhf). The output head is token_embd.weight
// when output.weight is absent, as for every architecture.
//
// # Numerics
//
// Every matrix-vector product dispatches on the weight tensor's recorded
// ggml type and quantizes its activations once to that type's ggml
// vec_dot_type (Q8_K for K-quants, Q8_0 for Q4_0/Q5_0/Q8_0, f16 for F16,
// bf16 for BF16, f32 for F32), so the rounding is the one llama.cpp's CPU
// backend applies. Attention mirrors llama.cpp without flash attention: K and
// V are stored as f16, the query is rounded to f16 for the K·q product, the
// scores are scaled by 1/sqrt(head_dim) and soft-maxed in f32 (sum in
// float64), and the probabilities are rounded to f16 before the product with
// V. A sliding layer's masked positions are skipped from a vector boundary
// on, which sums as llama.cpp's -inf mask over the whole cache does.
//
// # Memory
//
// Weights stay in the GGUF file's mapping: a Model holds views, never an f32
// copy. Small vectors (norm weights, biases, RoPE factors) are decoded to f32
// at load. Each Step owns its KV cache and scratch buffers.
//
// # Concurrency
//
// A Model is read-only after Load and may be shared by many Steps. A Step is
// not safe for concurrent use. Matrix products are split across a persistent
// worker pool owned by the Model (Options.Threads goroutines); Steps running
// at the same time take turns on it.
package model
