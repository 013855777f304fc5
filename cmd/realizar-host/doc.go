// Command realizar-host runs and inspects GGUF language models, with
// sampling and stop policies as sandboxed WebAssembly plugins.
//
// Usage:
//
//	realizar-host run --model M.gguf (--prompt TEXT | --prompt-file F | stdin) [flags]
//	realizar-host chat --model M.gguf [--system TEXT] [flags]
//	realizar-host perplexity --model M.gguf --file TEXT [--ctx-size N] [--json]
//	realizar-host embed --model M.gguf [--pooling mean|cls|last] (TEXT... | --file F) [--json]
//	realizar-host bench --model M.gguf [--threads T] [--prompt-tokens P] [--gen-tokens G] [--repetitions R] [--json]
//	realizar-host plugin check NAME|FILE.wasm|MANIFEST.json [--config JSON|@FILE] [--json]
//	realizar-host inspect MODEL.gguf [--tokens TEXT] [--json]
//	realizar-host quantize IN.gguf OUT.gguf TYPE [--threads N]
//	realizar-host fixture --preset NAME --out FILE [--vocab FILE] [--seed N]
//	realizar-host template render (--model M.gguf | --template FILE --bos S --eos S) --messages JSON|@FILE [--tools JSON|@FILE] [--no-generation-prompt] [--now TIME]
//	realizar-host serve --model M.gguf [--addr 127.0.0.1:8080] [--tenants FILE] [--plugin-dir DIR [--compiled-dir-bytes N]] [--queue N] [--ctx-size N]
//	realizar-host serve --model M.gguf --store postgres://... [--module-cache-bytes N]
//	realizar-host tenants add|list|remove|rotate|revoke|limits|import ... [--store postgres://...]
//
// run takes its prompt from exactly one source: --prompt, or --prompt-file,
// or stdin when neither is given (stdin is then not read; both flags at
// once, or an empty prompt, is a usage error). A prompt from a file or
// stdin loses exactly one trailing newline ("\n" or "\r\n"), so that
// `echo TEXT | realizar-host run` gives the tokens of --prompt TEXT.
//
// run streams only the generated text on stdout; a load progress bar (when
// stderr is a terminal) and a stats line go to stderr: prompt tokens (and
// how many were reused), generated tokens, prefill and decode tokens per
// second, time per step inside the policies, the stop reason and the seed
// (random unless --seed; always reported). --json prints one document
// instead. The sampler is an embedded policy by name (greedy, standard),
// a FILE.wasm or a MANIFEST.json; the sampling flags (--temperature,
// --top-k, --top-p, --min-p, --typical-p, --repeat-penalty, --repeat-last-n,
// --presence-penalty, --frequency-penalty) configure the embedded standard
// sampler and are a usage error with any other, and so is a value outside
// the range standard accepts (top-k >= 0; top-p, min-p, typical-p in
// [0, 1]; repeat-penalty > 0; repeat-last-n >= -1; a temperature <= 0 is
// greedy). The embedded standard and strings policies refuse a config key
// they do not know, naming it. --stop-string configures
// the embedded strings stop policy. --format json (run and chat) is JSON
// mode: the embedded json processor runs last before the sampler and masks
// every token that would keep the answer from being a JSON object; a turn
// ends with the object (or, cut by --max-tokens, the processor has closed
// it in time), and --ignore-eos with it, as with --json-schema or
// --grammar, is a usage error (chain.Spec.CheckIgnoreEOG). (run's --json is
// unrelated: it prints the turn as one document.) Commands that load a model take
// --model, or the file named by $REALIZAR_MODEL.
//
// chat reads one user message per line, renders the conversation with the
// model's chat template and answers it; the Session keeps the tokens of the
// previous turns, so each turn processes only the new ones (the stats line
// shows them as reused). /reset starts over, /exit quits.
//
// embed prints each text's embedding: its final hidden states pooled by
// --pooling (mean, cls, last) or the file's {arch}.pooling_type and scaled
// to unit length, as llama-server's /v1/embeddings (package embedding);
// serve --pooling makes the same vectors for POST /v1/embeddings.
//
// perplexity scores a text teacher-forced through Session.Score; bench
// measures prefill and decode speed with end-of-generation ignored; plugin
// check validates a plugin (a file, a manifest or an embedded policy by
// name) as run would and runs it on synthetic input;
// inspect prints a model's architecture, hyperparameters, tokenizer and
// tensor types, or with --tokens the tokens of a text. quantize converts an
// F32/F16/BF16 model of a registered architecture (package arch) to TYPE (Q4_K_M, Q4_K_S, Q8_0, Q4_0,
// F16, BF16) as llama.cpp's llama-quantize does. fixture writes a
// random-weight model for tests and benchmarks (see package fixture) and
// prints one line (path, preset, size); a preset carries the vocabulary its
// architecture's registration names (the embedded llama one, or llama.cpp's
// qwen2 or phi-3 one read from $LLAMAREF_DIR/vocab or <repository>/.cache/llamaref/vocab),
// the repository being the nearest directory above the working directory
// whose go.mod is this module's.
//
// serve runs the OpenAI-compatible server of package server (docs/serve.md);
// it exits 0 after SIGINT or SIGTERM, once running requests have finished
// or, after --grace, been cancelled. With --store (or $REALIZAR_STORE)
// its tenants and plugins are in PostgreSQL, shared by every replica;
// tenants manages them there and prints a new API key alone on one line
// of stdout.
//
// Errors are printed as one line on stderr, "realizar-host: <cause>".
// Exit status:
//
//	0    success
//	1    any other failure: writing output, an I/O error mid-run
//	2    usage: unknown command or flag, wrong arguments, flags that
//	     contradict each other (--sampler my.wasm --top-k 5), no model;
//	     malformed text given inline in place of a file (--grammar GBNF)
//	3    an input file a flag or argument names (but a plugin's) that is
//	     missing, unreadable or malformed (--prompt-file, --file,
//	     --json-schema, --grammar, --prediction, @FILE; readInput and
//	     input.refuse: the command line's fault is 2, a file's 3);
//	     a model file that is missing, a directory, unreadable, not GGUF, or of an
//	     unsupported architecture or tensor type (for quantize also one it
//	     cannot convert), or whose chat template runs past its limits in the
//	     sandbox (package chatsandbox: a crash, 64 MiB, 2 s, 1 MiB of output)
//	4    a plugin that does not load (missing, not WebAssembly, wrong kind,
//	     forbidden import, bad config) or that fails during a turn (trap,
//	     timeout, memory limit, bad token id)
//	5    the prompt (or the conversation) does not fit the context
//	130  interrupted (SIGINT or SIGTERM): the turn stopped, its partial
//	     text and stats were printed
package main
