// Package chatsandbox renders a GGUF's chat template (tokenizer.chat_template,
// Jinja2: untrusted input from a downloaded file) inside a WebAssembly
// sandbox, so that no template can crash, stall or bloat the process.
//
// The guest (guest/, embedded gzip-compressed as wasm/render.wasm.gz) is
// package jinja, the engine of tokenizer.RenderJinja, built for
// GOOS=wasip1: rendering is exactly the in-process one. The host runs it
// under wazero with a cap on linear memory, a deadline (the module is
// closed when it passes, wherever the guest is), caps on output and error
// bytes, jinja's step budget, and no files, arguments, environment or
// clock (the host passes strftime_now's time). A template that fails as
// Jinja2 fails it (a division by zero, a range past the sandbox's 100000,
// raise_exception) is an error wrapping tokenizer.ErrTemplate with the
// template line; one that would exhaust the process (a huge string, deep
// recursion, endless work) also wraps tokenizer.ErrTemplateLimit, within
// the deadline, and the process goes on.
//
// The module is compiled once per Renderer (New); each Render instantiates
// it afresh, so no state passes from one template or request to the next.
//
// Imports point one way: chatsandbox imports tokenizer (its Message,
// ChatOptions and errors) and wazero; tokenizer does not import it. Callers
// choose the renderer: Tokenizer.ApplyChatWith(r.Func(ctx), ...).
package chatsandbox
