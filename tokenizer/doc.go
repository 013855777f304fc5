// Package tokenizer turns text into token ids and back, exactly as llama.cpp
// does for the same GGUF vocabulary.
//
// A Tokenizer is built from GGUF metadata alone (Open, FromGGUF, or New on
// a Spec of plain values): the
// token list, scores, token types, BPE merges, the special-token ids and the
// tokenizer.ggml.model / tokenizer.ggml.pre pair that selects the algorithm:
//
//   - model "llama": SentencePiece BPE driven by token scores, with "▁" for
//     spaces, a leading space added to each text run, and <0xNN> byte
//     fallback for anything the vocabulary lacks.
//   - model "gpt2": byte-level BPE driven by merge ranks. Text is first split
//     into words by a pre-tokenizer ("gpt-2", "llama-bpe", "qwen2", "qwen35"
//     and the aliases llama.cpp gives them), each word's bytes are mapped to
//     printable code points, then merged.
//
// The pre-tokenizers are hand-written splitters that reproduce the
// behaviour of the tokenizer.json regular expressions as llama.cpp applies
// them (Unicode letter/number/whitespace classes and the \s+(?!\S)
// lookahead); they are proven equal on llama.cpp's own test vectors.
//
// Invalid UTF-8 input never fails: SentencePiece keeps the bytes through
// byte fallback; byte-level BPE replaces each invalid byte with U+FFFD, as
// llama.cpp does.
//
// The package also provides the end-of-generation set (IsEOG, decided as
// llama.cpp decides it), raw token bytes (Piece, control tokens as their
// text), the text a user reads (Renderer: control and unknown tokens
// render as nothing unless RenderOptions.Special, as llama_token_to_piece
// with special=false, except a chat format's preserved tokens), a
// streaming detokenizer that only emits complete UTF-8 (Stream), and chat
// templates: the file's
// Jinja template rendered as transformers' apply_chat_template renders it
// (package jinja), or ChatML when the file has none (ApplyChat); a template
// that fails is an error naming its line, never another format. Built-in
// ChatML, Llama 2, Llama 3 and Zephyr renderers remain (RenderBuiltin).
//
// Differences from llama.cpp, all on input llama.cpp cannot handle: a
// code point above U+10FFFF (which aborts llama.cpp) becomes U+FFFD; a
// missing byte-fallback token becomes unk or is dropped (llama.cpp throws);
// add_bos with no BOS id adds nothing (llama.cpp asserts).
//
// A Tokenizer is immutable after construction and safe for concurrent use.
package tokenizer
