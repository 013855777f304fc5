// Package parity holds the tests that compare this project's packages with
// the llama.cpp reference (package ref): ggml's block codecs against quant's,
// bit for bit; quant's quantizers against ggml_quantize_chunk (bit-exact count
// and RMSE ratio); quant's activation encoders and dot products against the
// CPU backend's; the tensor tables of llama.cpp-quantized files; and the CPU
// forward (package model) against llama.cpp's logits and greedy text.
//
// Run them with `make test-ref`, or `cd tools/llamaref && go test -timeout T
// ./parity/ -v` with T the Makefile's REF_TIMEOUT (the whole suite needs
// more than go test's default 10 minutes on a loaded machine:
// TestSuiteTimeout); the -v output
// carries the figures recorded in BENCHMARKS.md. Under CI=true a missing
// reference or model is a failure, elsewhere a skip.
package parity
