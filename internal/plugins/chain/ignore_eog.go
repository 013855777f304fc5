package chain

import "fmt"

// IgnoreEOGError is a turn that asks for a structured output (JSON mode
// or a grammar: a schema, a GBNF grammar, tool calls) with its
// end-of-generation tokens masked (llama.cpp's ignore_eos,
// engine.GenerateConfig.IgnoreEOG). The structured output's processor
// ends a complete answer with an end-of-generation token; ignore_eos
// masks those tokens (the sampler never picks them), so a finished
// answer would have no token left ("the token mask allows no token"), or,
// in JSON mode, whitespace until the budget. The CLI's is a usage error,
// the server's a 400 naming Param.
type IgnoreEOGError struct {
	// Param is the flag or request field that asked for ignore_eos
	// ("--ignore-eos", "ignore_eos").
	Param string
	// With is the structured output's flag or request field: the Param of
	// the Spec's JSONMode or Grammar ("--json-schema", "response_format",
	// "tools").
	With string
}

func (e *IgnoreEOGError) Error() string {
	return fmt.Sprintf("%s cannot go with %s: a structured output ends with an end-of-generation token, and %s masks those tokens (never sampled)",
		e.Param, e.With, e.Param)
}

// CheckIgnoreEOG is the rule that a structured output (s.JSONMode or
// s.Grammar) cannot go with ignoreEOG, the turn's
// engine.GenerateConfig.IgnoreEOG, asked for by the flag or request
// field param: an *IgnoreEOGError naming the structured output's Param,
// nil when the two do not meet. A Part's Config plays no part: a Spec
// of Params alone (a CLI's flags, checked before the model loads) is
// checked alike.
func (s Spec) CheckIgnoreEOG(ignoreEOG bool, param string) error {
	if !ignoreEOG {
		return nil
	}
	for _, p := range []*Part{s.JSONMode, s.Grammar} {
		if p != nil {
			return &IgnoreEOGError{Param: param, With: p.Param}
		}
	}
	return nil
}
