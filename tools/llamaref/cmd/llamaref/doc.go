// Command llamaref runs the llama.cpp reference (tools/llamaref/ref) from the
// command line: quantize a GGUF with llama.cpp's quantizer, list its tensors
// as ggml reads them, dequantize a tensor with ggml's code, tokenize, print
// per-position logits, decode greedily, and time prefill and decode.
//
// The reference folder is $LLAMAREF_DIR, else <repo root>/.cache/llamaref
// (made by tools/llamaref/install.sh). Run "llamaref help" for the commands.
package main
