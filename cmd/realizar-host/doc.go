// Command realizar-host runs and inspects GGUF language models.
//
// Usage:
//
//	realizar-host inspect MODEL.gguf [--json]
//	realizar-host quantize IN.gguf OUT.gguf TYPE [--threads N]
//	realizar-host fixture --preset NAME --out FILE [--vocab FILE] [--seed N]
//	realizar-host serve --model M.gguf [--addr 127.0.0.1:8080] [--tenants FILE] [--plugin-dir DIR] [--queue N] [--ctx-size N]
//
// inspect prints a model's architecture, hyperparameters, tokenizer, and its
// tensors counted and sized by type. quantize converts an F32/F16/BF16 llama
// or qwen2 model to TYPE (Q4_K_M, Q4_K_S, Q8_0, Q4_0, F16, BF16) as
// llama.cpp's llama-quantize does, and prints one summary line. fixture writes a random-weight model
// for tests and benchmarks (see package fixture). serve runs the
// OpenAI-compatible server of package server (docs/serve.md); it exits 0
// after SIGINT or SIGTERM, once running requests have finished or, after
// --grace, been cancelled.
//
// Errors are printed as one line on stderr. Exit status: 0 success, 1 any
// other failure, 2 usage error (unknown command or flag, wrong arguments),
// 3 a model file that is missing, unreadable or malformed (for quantize also
// one it cannot convert: an architecture without type rules, or tensors
// already quantized).
package main
