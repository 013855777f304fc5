// Package ref drives the llama.cpp reference — the prebuilt llama.cpp v0.5.0
// shared libraries from npm @node-llama-cpp/linux-x64@3.22.1 — from Go, so
// parity tests and benchmarks can compare this project against llama.cpp's
// own code on the same inputs.
//
// The libraries are loaded without cgo: llama.cpp's public API through
// github.com/hybridgroup/yzma, and the ggml symbols yzma does not bind
// (ggml_get_type_traits, ggml_quantize_chunk, the gguf_* reader, the CPU
// backend's ggml_get_type_traits_cpu) through the same libffi loader.
//
// # Layout
//
// [Dir] finds the reference folder: $LLAMAREF_DIR, else
// <repo root>/.cache/llamaref, as laid out by tools/llamaref/install.sh:
//
//	lib/        libllama.so, libggml.so, libggml-base.so, libggml-cpu-*.so
//	vocab/      ggml-vocab-*.gguf and their .inp/.out tokenizer vectors
//	llama.cpp/  the matching source tree
//
// # What it offers
//
//   - [Lib.Quantize]: a GGUF file quantized by llama_model_quantize
//     (Q4_K_M, Q4_K_S, Q8_0, Q4_0, F16, BF16 ...).
//   - [Lib.Dequantize], [Lib.QuantizeRows], [Lib.QuantizeRowCPU],
//     [Lib.VecDot]: ggml's own block codecs and dot products on Go slices.
//   - [Lib.Tensors]: a GGUF file's tensor table as ggml's gguf reader sees it.
//   - [Model]: tokenize, detokenize, pieces; [Context]: per-position logits,
//     greedy decoding and timing from a pinned context (fixed n_ctx, f16 KV
//     cache, flash attention off, fixed thread count).
//
// # Notes
//
// llama.cpp's libraries are process-wide: [Open] loads them once, and every
// later call returns the same [*Lib]. A [Context] is not safe for concurrent
// use; the codec methods of [*Lib] are.
package ref
