//go:build wasip1

// Command wasm is the grammar processor (plugin "grammar", ABI 2, mask
// mode): the grammar package's engine built with the Go SDK. Config: one
// of
//
//	{"grammar": "root ::= ..."}        a GBNF grammar (llama.cpp's format)
//	{"json_schema": {...}}             a JSON Schema (grammar.FromJSONSchema)
//
// and optionally "max_tokens": the turn's token budget (0: none): when
// set, a token is allowed only if the grammar can still be completed in
// the tokens left after it less one, kept for end of generation
// (grammar.Matcher.MaskWithin; one token a byte,
// so the vocabulary needs a single-byte token for a byte of every
// terminal, else the budget is off with a warning), so a turn cut by the
// budget ends with a complete sentence and end of generation; and optionally "triggers": ["<tool_call>", ...] (1 to 16 strings): a
// lazy grammar (grammar.Lazy, llama.cpp's grammar_lazy with word
// triggers) that allows every token until one of them appears in the
// generated text, and from the trigger's first byte on constrains the
// text to the grammar, which therefore starts with the trigger.
//
// At init it reads every token's piece (vocab_piece) and attributes
// (token_attrs: end-of-generation tokens are allowed where the grammar may
// end, control tokens never) and compiles the grammar; a schema or grammar
// it cannot enforce is refused (config error, the reason in the log). Each
// step it advances past the tokens accepted since the previous step and
// returns the address of the mask of the state it reached, which it keeps
// cached per state. A token the grammar refuses (one the host did not
// sample under this mask) leaves an all-zero mask, so the turn ends with
// engine.ErrNoTokenAllowed, which the server answers as a 422
// no_token_allowed naming the request field. Build: plugins/build.sh go.
package main
