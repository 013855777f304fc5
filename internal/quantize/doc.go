// Package quantize converts a GGUF model with float weights (F32, F16 or
// BF16) into a quantized GGUF file, choosing the type of every tensor by
// llama.cpp's rules for its file types (llama_model_quantize in llama.cpp
// v0.5.0, without an importance matrix), for every architecture
// registered in package arch, whose registration gives the one rule that
// depends on it (arch.Quant: which files are of llama.cpp's 70B type) and
// whether it has experts (llama.cpp has no qwen3-, gemma3- or
// ernie4_5-specific rules; qwen3moe takes its generic expert rules; phi3's fused attn_qkv takes attn_v's rules, its own
// branch in llama.cpp being unreachable behind them; gemma3's
// post_attention_norm and post_ffw_norm are norms, kept).
//
// # File types
//
// Q4_K_M, Q4_K_S, Q8_0, Q4_0, F16 and BF16 (see FileType). For each tensor:
//
//   - Tensors that are not quantized keep their source type and bytes: those
//     with fewer than two dimensions (norms, biases), names not ending in
//     "weight", "*_norm.weight", and a few auxiliary tables llama.cpp names
//     (expert gates, position embeddings).
//   - F16 and BF16 files store every other tensor as F16 or BF16.
//   - The quantized file types start from a default type (Q4_K for Q4_K_M
//     and Q4_K_S, Q8_0, Q4_0), then: output.weight — and token_embd.weight
//     when the model ties its output to the embeddings — is Q6_K (Q8_0 in a
//     Q8_0 file, or when its row length is not a multiple of the default
//     type's block); in Q4_K_M, attn_v.weight and ffn_down.weight of the
//     "use more bits" layers are Q6_K (layer i of n: i < n/8, i ≥ 7n/8, or
//     (i - n/8) % 3 == 2); in Q4_K_S, the first four attn_v.weight and the
//     ffn_down.weight of layers i < n/8 are Q5_K; in an 80-layer llama with
//     grouped-query attention (or an 80-layer qwen2), Q4_K attn_v.weight
//     becomes Q5_K.
//   - A file with exactly 8 experts (expert_count) gets llama.cpp's
//     8-expert bumps: attn_k.weight and attn_v.weight are Q8_0 in every
//     quantized type, attn_output.weight Q5_K in Q4_K_M and Q4_K_S. The
//     merged expert tensors (ffn_gate_exps, ffn_up_exps, ffn_down_exps; 3-D,
//     quantized row by row) follow ffn_gate, ffn_up and ffn_down, the layer
//     of ffn_down_exps read from its name; the router (ffn_gate_inp) is kept.
//   - Rows whose length is not a multiple of 256 fall back: Q4_K to Q5_0,
//     Q5_K to Q5_1, Q6_K to Q8_0; rows that are not a multiple of 32 either
//     are stored as F16.
//
// Quantization uses quant's reference quantizers, which equal ggml's bit for
// bit, so a tensor's data equals llama.cpp's for the same source and type.
//
// # Output
//
// The output keeps every metadata pair of the source in order, except the
// split keys (the output is one file), then sets general.quantization_version
// to 2 and general.file_type to llama.cpp's LLAMA_FTYPE value of the file
// type. Tensors are written in llama.cpp's order: tensors outside the blocks
// by name, then block by block, by name within a block.
//
// Rows are quantized in parallel by a bounded pool of workers; one tensor's
// output is held in memory at a time and written before the next starts, and
// the source is read through gguf's memory-mapped views.
package quantize
