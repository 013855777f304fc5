// Package chatsandbox renders a GGUF's chat template (tokenizer.chat_template,
// Jinja2: untrusted input from a downloaded file) inside a WebAssembly
// sandbox, so that no template can crash, stall or bloat the process.
//
// The guest (guest/, embedded gzip-compressed as wasm/render.wasm.gz) is gonja, the engine and
// version of tokenizer.RenderJinja, built for GOOS=wasip1: rendering is
// exactly the in-process one. The host runs it under wazero with a cap on
// linear memory, a deadline (the module is closed when it passes, wherever
// the guest is), caps on output and error bytes, and no files, arguments
// or environment. In-process, `{{ 1 % 0 }}` panics, a huge string
// repetition or a recursive macro is a Go fatal error (which no recover
// stops), and a range over 10^8 runs for minutes; in the sandbox each is
// an error wrapping tokenizer.ErrTemplate and tokenizer.ErrTemplateLimit
// within the deadline, and the process goes on.
//
// The module is compiled once per Renderer (New); each Render instantiates
// it afresh, so no state passes from one template or request to the next.
//
// Imports point one way: chatsandbox imports tokenizer (its Message,
// ChatOptions and errors) and wazero; tokenizer does not import it. Callers
// choose the renderer: Tokenizer.ApplyChatWith(r.Func(ctx), ...).
package chatsandbox
