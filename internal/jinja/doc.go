// Package jinja renders Hugging Face chat templates (Jinja2) exactly as
// transformers' apply_chat_template does: Jinja2's immutable sandbox with
// trim_blocks and lstrip_blocks, the loopcontrols extension ({% break %},
// {% continue %}), the {% generation %} tag, raise_exception,
// strftime_now, and tojson as transformers defines it (json.dumps with
// ensure_ascii=False, indent, separators and sort_keys).
//
// Values are Python's: dicts keep their insertion order (so a tool's JSON
// Schema prints in the order the client sent it), {{ x }} prints Python's
// str(x) (None, True, ['a', 1]), str, dict and list methods
// (.strip(), .get(), .items()) work, mutating methods are refused, and
// |safe text escapes what + joins to it. A missing variable or attribute is
// Jinja2's Undefined: empty when printed, false when tested, an error when
// used further.
//
// It is a leaf package (no project imports), so that both the tokenizer
// and the WebAssembly guest of package chatsandbox render with it. The
// conformance suite in testdata/hf compares its output byte for byte with
// Jinja2's on llama.cpp's template collection.
//
// # Notes
//
// Runtime errors unwind the evaluator with a private panic that Render
// recovers into an *Error; no panic leaves the package. Limits bound the
// work and the output; the sandbox bounds memory and wall time.
package jinja
