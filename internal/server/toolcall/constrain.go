package toolcall

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// Constraint is what the grammar processor is configured with for a turn
// with tools: a GBNF grammar of the family's calls over the tools' schemas
// and, for Auto, the triggers that start it (grammar.Lazy). Triggers nil:
// the grammar constrains from the first token.
type Constraint struct {
	GBNF     string
	Triggers []string
}

// trigger is the text that starts a call of family f under Auto: the
// grammar constrains from its first byte on.
func trigger(f Family) string {
	switch f {
	case Hermes:
		return hermesOpen
	case Llama3:
		return `{"name"`
	case Mistral, MistralArgs:
		return toolCalls
	}
	return `{"tool_calls"`
}

// Constrain builds the grammar of family f's calls of tools under choice
// (Named keeps only the named tool); parallel allows more than one call
// (Llama3 writes one call at most, as its template renders). Each call's
// arguments are the compact JSON its Parameters allow
// (grammar.FromJSONSchema); the envelope around them ("<tool_call>", the
// "name" key, ...) is compact too, so that a forced call is short: at most
// one space after each ":" and "," (as json.dumps writes them), and for
// Hermes at most one newline inside and between the blocks (as Qwen's
// template writes them), nothing elsewhere. Auto gives Trigger(f) as the
// trigger. None,
// or no tools, is an error; so is a schema the engine cannot enforce
// (wrapping ErrSchema).
func Constrain(f Family, tools []Tool, choice Choice, parallel bool) (Constraint, error) {
	if choice.Mode == None || len(tools) == 0 {
		return Constraint{}, fmt.Errorf("%w: no call to constrain (tool_choice %s, %d tools)", ErrRequest, choice.label(), len(tools))
	}
	var b strings.Builder
	var calls []string
	base := false
	for i, t := range tools {
		if choice.Mode == Named && t.Name != choice.Name {
			continue
		}
		src, err := grammar.FromJSONSchema(t.Parameters)
		if err != nil {
			return Constraint{}, fmt.Errorf("%w: tool %s: %w", ErrSchema, t.Name, err)
		}
		prefix := "t" + strconv.Itoa(i) + "-"
		rules, err := renameRules(src, prefix, !base)
		if err != nil {
			return Constraint{}, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		base = true
		b.WriteString(rules)
		call := prefix + "call"
		calls = append(calls, call)
		name := gbnfLiteral(strconv.Quote(t.Name)) // names are [a-zA-Z0-9_-]: Quote is JSON here
		args := prefix + "root"
		switch f {
		case MistralArgs:
			b.WriteString(call + ` ::= "[TOOL_CALLS]" ` + gbnfLiteral(t.Name) + ` "[ARGS]" ` + args + "\n")
		default:
			key := gbnfLiteral(strconv.Quote(f.argKeys()[0]))
			b.WriteString(call + ` ::= "{\"name\":" tc-sp ` + name + ` "," tc-sp ` + key + ` ":" tc-sp ` + args + ` "}"` + "\n")
		}
	}
	if len(calls) == 0 {
		return Constraint{}, fmt.Errorf("%w: tool_choice names %q, which tools does not define", ErrRequest, choice.Name)
	}
	b.WriteString("tc-call ::= " + strings.Join(calls, " | ") + "\n")
	b.WriteString("tc-sp ::= \" \"?\n")
	more := func(sep string) string {
		if !parallel {
			return ""
		}
		return " ( " + sep + " )*"
	}
	var root string
	switch f {
	case Hermes:
		root = `tc-block` + more(`"\n"? tc-block`) + "\n" +
			`tc-block ::= "<tool_call>" "\n"? tc-call "\n"? "</tool_call>"`
	case Llama3:
		root = `tc-call`
	case Mistral:
		root = `"[TOOL_CALLS][" tc-call` + more(`"," tc-sp tc-call`) + ` "]"`
	case MistralArgs:
		root = `tc-call` + more(`tc-call`)
	default:
		root = `"{\"tool_calls\":" tc-sp "[" tc-call` + more(`"," tc-sp tc-call`) + ` "]}"`
	}
	src := "root ::= " + root + "\n" + b.String()
	if _, err := grammar.Compile(src); err != nil {
		// "the tools' grammar: too large: …": the grammar package's own
		// prefix completes the phrase.
		return Constraint{}, fmt.Errorf("%w: the tools' %w", ErrSchema, err)
	}
	c := Constraint{GBNF: src}
	if choice.Mode == Auto {
		c.Triggers = []string{trigger(f)}
	}
	return c, nil
}

// gbnfLiteral is s as a GBNF string literal.
func gbnfLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// renameRules rewrites a grammar that grammar.FromJSONSchema wrote (one
// rule a line) so that several live in one grammar: every rule but the
// shared json-* ones is renamed prefix+name (root becomes prefix+"root"),
// in its definition and wherever a body refers to it; the json-* rules are
// kept when withBase, else dropped (an earlier tool's copy serves).
func renameRules(src, prefix string, withBase bool) (string, error) {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(src, "\n"), "\n") {
		name, body, ok := strings.Cut(line, " ::= ")
		if !ok {
			return "", fmt.Errorf("toolcall: unexpected grammar line %q", line)
		}
		if strings.HasPrefix(name, "json-") {
			if withBase {
				b.WriteString(line + "\n")
			}
			continue
		}
		b.WriteString(prefix + name + " ::= " + renameRefs(body, prefix) + "\n")
	}
	return b.String(), nil
}

// renameRefs prefixes the rule references in a GBNF rule body, leaving
// string literals, character classes and the json-* rules alone.
func renameRefs(body, prefix string) string {
	var b strings.Builder
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"' || c == '[':
			end := byte('"')
			if c == '[' {
				end = ']'
			}
			j := i + 1
			for j < len(body) && body[j] != end {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(body))
			b.WriteString(body[i:j])
			i = j
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(body) && isWordChar(body[j]) {
				j++
			}
			word := body[i:j]
			if !strings.HasPrefix(word, "json-") {
				b.WriteString(prefix)
			}
			b.WriteString(word)
			i = j
		case isWordChar(c): // a count inside {m,n}
			j := i
			for j < len(body) && isWordChar(body[j]) {
				j++
			}
			b.WriteString(body[i:j])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}
