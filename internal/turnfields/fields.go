package turnfields

import (
	"strconv"

	"github.com/realizar-host/realizar-host/engine"
)

// Type is what a field's value is.
type Type int

// The field types.
const (
	// Bool is a JSON boolean (null is the default) and a CLI flag that
	// takes no value.
	Bool Type = iota
)

// String is t's name in the README's table.
func (t Type) String() string {
	switch t {
	case Bool:
		return "boolean"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Field is one request field of a turn.
type Field struct {
	// Key is the request field on every endpoint: llama-server's name,
	// OpenAI's or Anthropic's where their API has the field.
	Key string
	// OpenAI and Anthropic say their APIs have the field (under Key);
	// otherwise it is an extension the server accepts on their endpoints
	// too.
	OpenAI, Anthropic bool
	// LlamaCpp is llama.cpp's CLI flag for it ("--ignore-eos"), "" for
	// none.
	LlamaCpp string
	Type     Type
	// Default is the value of a request or a command line without the
	// field.
	Default bool
	// Flag is run and chat's CLI flag, without its dashes ("ignore-eos"),
	// and "" where there is none.
	Flag string
	// Usage is the CLI flag's help and the README's note.
	Usage string
	// Config is the name of the engine.GenerateConfig field that Set
	// sets (the README's and the tests'; Set is what sets it).
	Config string
	// Set sets the field's value v in cfg.
	Set func(cfg *engine.GenerateConfig, v bool)
}

// IgnoreEOS is llama.cpp's ignore_eos: the end-of-generation tokens are
// masked (engine.GenerateConfig.IgnoreEOG), so the turn runs to its budget,
// the context or a stop string. Callers that name the field (the rule
// that a structured output cannot go with it: chain.Spec.CheckIgnoreEOG)
// take its Key and Flag from here.
var IgnoreEOS = Field{Key: "ignore_eos", LlamaCpp: "--ignore-eos", Type: Bool, Flag: "ignore-eos",
	Usage:  "never stop on the model's end-of-generation tokens: they are masked (never sampled); not with a structured output (JSON mode, a schema, a grammar, tool calls), which ends with one",
	Config: "IgnoreEOG", Set: func(cfg *engine.GenerateConfig, v bool) { cfg.IgnoreEOG = v }}

// Fields are the turn's request fields, each declared once.
var Fields = []Field{IgnoreEOS}

// Lookup returns the field whose Key is key.
func Lookup(key string) (Field, bool) {
	for _, f := range Fields {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// Apply sets every field in cfg: the value value gives for its key when
// it has one, the field's Default otherwise. value is the request's or
// the command line's reading of a field (nil: none given).
func Apply(cfg *engine.GenerateConfig, value func(f Field) *bool) {
	for _, f := range Fields {
		v := f.Default
		if p := value(f); p != nil {
			v = *p
		}
		f.Set(cfg, v)
	}
}
