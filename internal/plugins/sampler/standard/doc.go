// Package standard is the standard sampler's chain in Go: llama.cpp's
// default sampling (logit bias → repeat/presence/frequency penalties →
// top-n-sigma → top-k → typical-p → top-p → min-p → XTC → temperature,
// fixed or dynamic → seeded draw) with its default parameters, in the
// contract's arithmetic (abi/ABI.md §9); the samplers config reorders the
// stages between the penalties and the draw, or leaves some out
// (llama.cpp's samplers, samplers.go).
//
// It is the specification of the standard plugin: the Go build
// (./wasm, with abi/guest) runs it, and the C build (standard.c, the
// embedded default) performs the same operations in the same order; the
// plugins tests check that both choose the same tokens over 10,000 steps.
// With top_k 0 the C build reaches the same softmax sums and cut points
// without sorting the whole vocabulary (c/whole_vocab.c): it sums buckets
// of it where the order cannot change the rounding, and a traced build
// checks those sums bit for bit against this package's order.
// Outside wasm it is also a native reference for tests.
package standard
