// Package plugins holds realizar-host's reference policies, built from the
// sources in this folder into WebAssembly modules (plugins/wasm/, rebuilt
// byte for byte by plugins/build.sh), and embeds the defaults so that a
// binary needs no plugin files and `go install` needs no wasm toolchain.
//
// The policies:
//
//	sampler/greedy        greedy       argmax via the top-1 candidate (C, embedded)
//	sampler/standard      standard     llama.cpp's default chain (C, embedded; Go: standard-go)
//	sampler/mirostat      mirostat-v2  Mirostat 2.0, tau 5, eta 0.1 (C, embedded)
//	sampler/minp          min-p        min-p, then a seeded draw at a temperature (Rust)
//	processor/dry         dry          llama.cpp's DRY repetition penalty (C, embedded)
//	processor/bias        logit-bias   OpenAI's logit_bias: add to or ban chosen tokens (Rust)
//	processor/json        json         JSON mode: masks tokens that would break a JSON prefix (C, embedded)
//	processor/allow       allow        ABI 2 example: only a fixed token set, as a cached mask
//	                                   (C; Go: allow-go, Rust: allow-rust, AssemblyScript: allow-as)
//	processor/grammar     grammar      ABI 2: a GBNF grammar or a JSON Schema as a cached mask,
//	                                   the grammar package's engine (Go, embedded: 2.9 MiB)
//	stop/strings          strings      stop strings over the detokenized bytes (C, embedded; Go: strings-go)
//	stop/regex            regex        RE2 stop patterns (Go)
//	stop/repetition       repetition   stops an n-gram loop (C, embedded)
//	stop/maxtime          max-time     stops after a time budget (WAT, embedded)
//	stop/maxlines         max-lines    stops at the n-th newline (AssemblyScript)
//
// The Rust and AssemblyScript policies are examples that the ABI is
// language-neutral, and allow the example of ABI 2's allowed-token mask:
// files in plugins/wasm, not embedded.
//
// Builtin returns an embedded module's bytes for host.Host.Load; Names
// lists them. Each policy's config keys are documented in its source;
// Standard, StopStrings and JSONMode build the configs of the standard
// sampler, the strings stop policy and the json processor (checked against
// their ranges), and the *Builtin constants name the embedded plugins.
package plugins
