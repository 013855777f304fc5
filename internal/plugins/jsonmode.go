package plugins

import (
	"encoding/json"
	"time"
)

// GrammarMemoryPages is the memory cap (64 KiB pages, 256 MiB) to load
// the grammar processor with: it holds the vocabulary's trie and its
// masks (a 152k vocabulary needs more than the host's 32 MiB default).
const GrammarMemoryPages = 4096

// GrammarInitTimeout is the init deadline to load the grammar processor
// with: it reads and sorts the whole vocabulary into its trie (seconds at
// 152k tokens in the sandbox, past the host's 2 s default).
const GrammarInitTimeout = 60 * time.Second

// JSONMode is the config of the json processor (processor/json/json.c),
// which masks every token whose piece would make the generated text stop
// being a prefix of a JSON value. Build it from the model's tokenizer:
// EOG from tokenizer.EOG, Control from tokenizer.Control.
type JSONMode struct {
	// EOG are the end-of-generation ids, allowed once the value is
	// complete and only then. Required (the processor refuses an empty
	// list: it could not end the turn).
	EOG []int32 `json:"eog"`
	// Control are ids always masked: control tokens render as their text
	// ("<s>"), which would otherwise be valid inside a JSON string.
	Control []int32 `json:"control,omitempty"`
	// AnyValue allows any JSON value at the top level; false asks for an
	// object, as OpenAI's json_object does.
	AnyValue bool `json:"any_value,omitempty"`
	// MaxDepth caps the nesting of objects and arrays, 1 to 1024; 0 keeps
	// the processor's default, 64.
	MaxDepth int `json:"max_depth,omitempty"`
	// MaxTokens is the turn's token budget: when > 0 a token is allowed
	// only if the value can still be completed in the tokens left, so that
	// a turn cut by its max_tokens still ends with whole JSON. 0: no budget.
	MaxTokens int `json:"max_tokens,omitempty"`
}

// Config is m as the processor's JSON config.
func (m JSONMode) Config() json.RawMessage {
	b, _ := json.Marshal(m) // ints, bools and int slices always marshal
	return b
}

// Grammar is the config of the grammar processor (GrammarBuiltin,
// plugins/processor/grammar), which masks every token that would take the
// generated text out of a grammar's language. Give exactly one of GBNF and
// JSONSchema (the processor refuses both or neither); the processor
// compiles it at init, so a caller that wants the grammar's own error
// checks it first (grammar.Compile, grammar.FromJSONSchema).
type Grammar struct {
	// GBNF is a grammar in llama.cpp's GBNF, its start rule root.
	GBNF string `json:"grammar,omitempty"`
	// JSONSchema is a JSON Schema the processor turns into a grammar
	// (grammar.FromJSONSchema); Config writes it compacted.
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
	// Triggers, when set, make the grammar lazy (grammar.Lazy): the text
	// is free until one of them appears, constrained from it on.
	Triggers []string `json:"triggers,omitempty"`
	// MaxTokens is the turn's token budget (0: none): the processor
	// closes the grammar within it (grammar.Matcher.MaskWithin).
	MaxTokens int `json:"max_tokens,omitempty"`
}

// Config is g as the processor's JSON config. A JSONSchema that is not
// valid JSON makes it nil: check the schema first.
func (g Grammar) Config() json.RawMessage {
	b, err := json.Marshal(g) // strings always marshal; the schema if it is JSON
	if err != nil {
		return nil
	}
	return b
}
