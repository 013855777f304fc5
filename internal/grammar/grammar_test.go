package grammar_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      error
		line, col int
	}{
		{"no root", "# a comment\n  a ::= \"x\"", grammar.ErrUndefinedRule, 2, 3},
		{"empty", "# nothing", grammar.ErrUndefinedRule, 1, 1},
		{"undefined", "root ::= \"b\" a\n", grammar.ErrUndefinedRule, 1, 14},
		{"missing ::=", "root = \"x\"", grammar.ErrSyntax, 1, 6},
		{"unterminated string", "root ::= \"abc", grammar.ErrSyntax, 1, 14},
		{"unterminated class", "root ::= [a-", grammar.ErrSyntax, 1, 13},
		{"reversed range", "root ::= [z-a]", grammar.ErrSyntax, 1, 14},
		{"bad escape", "root ::= \"\\q\"", grammar.ErrSyntax, 1, 11},
		{"short hex", "root ::= \"\\x4\"", grammar.ErrSyntax, 1, 11},
		{"repeat first", "root ::= *", grammar.ErrSyntax, 1, 10},
		{"unclosed group", "root ::= (\"a\"", grammar.ErrSyntax, 1, 14},
		{"bad repeat", "root ::= \"a\"{3,1}", grammar.ErrSyntax, 1, 17},
		{"huge repeat", "root ::= \"a\"{5000}", grammar.ErrSyntax, 1, 18},
		{"second line", "root ::= a\na ::= \"x\" )", grammar.ErrSyntax, 2, 11},
		{"duplicate", "root ::= \"a\"\nroot ::= \"b\"", grammar.ErrSyntax, 2, 1},
		{"token terminal", "root ::= <think>", grammar.ErrSyntax, 1, 10},
		{"left recursion", "root ::= root \"a\" | \"b\"", grammar.ErrLeftRecursion, 1, 1},
		{"indirect left recursion", "root ::= a \"x\"\na ::= b? root\nb ::= \"y\"", grammar.ErrLeftRecursion, 1, 1},
		{"left recursion of a later rule", "root ::= \"x\" a\n\na ::= b? a \"z\"\nb ::= \"y\"", grammar.ErrLeftRecursion, 3, 1},
		{"left recursion inside a repetition", "root ::= \"x\"\n a ::= (\"b\"? a \"c\")* \"d\"", grammar.ErrLeftRecursion, 2, 2},
		{"too large", "root ::= ((((\"ab\"){2000}){2000}){2000})", grammar.ErrTooLarge, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := grammar.Compile(tt.src)
			require.ErrorIs(t, err, tt.want)
			var se *grammar.SyntaxError
			var re *grammar.RuleError
			switch {
			case errors.As(err, &se):
				assert.Equal(t, [2]int{tt.line, tt.col}, [2]int{se.Line, se.Col}, err.Error())
			case errors.As(err, &re):
				assert.Equal(t, [2]int{tt.line, tt.col}, [2]int{re.Line, re.Col}, err.Error())
			default:
				assert.Zero(t, tt.line, "%s: no position", err)
			}
			if tt.line > 0 {
				assert.Contains(t, err.Error(), fmt.Sprintf("line %d, column %d", tt.line, tt.col))
			}
			assert.Equal(t, 1, strings.Count(err.Error(), "grammar: "), err.Error())
		})
	}
}

func TestLlamaCppGrammarsCompile(t *testing.T) {
	files, err := filepath.Glob("testdata/*.gbnf")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = grammar.Compile(string(src))
		assert.NoError(t, err, f)
	}
}

// byteVocab has one token per byte plus a few multi-byte tokens and an EOG.
func byteVocab(t testing.TB, extra ...string) (*grammar.Vocab, int32) {
	var pieces [][]byte
	var kinds []grammar.TokenKind
	for b := range 256 {
		pieces = append(pieces, []byte{byte(b)})
		kinds = append(kinds, grammar.TokenText)
	}
	for _, e := range extra {
		pieces = append(pieces, []byte(e))
		kinds = append(kinds, grammar.TokenText)
	}
	pieces = append(pieces, []byte("</s>"))
	kinds = append(kinds, grammar.TokenEOG)
	v, err := grammar.NewVocab(pieces, kinds)
	require.NoError(t, err)
	return v, int32(len(pieces) - 1)
}

func TestMatchBytes(t *testing.T) {
	json, err := os.ReadFile("testdata/json.gbnf")
	require.NoError(t, err)
	tests := []struct {
		name, src, input string
		prefix, full     bool // input is a viable prefix; input is complete
	}{
		{"literal", `root ::= "abc"`, "abc", true, true},
		{"literal prefix", `root ::= "abc"`, "ab", true, false},
		{"literal wrong", `root ::= "abc"`, "abd", false, false},
		{"alt", `root ::= "a" | "bc"`, "bc", true, true},
		{"star", `root ::= [a-c]*`, "abcabc", true, true},
		{"star empty", `root ::= [a-c]*`, "", true, true},
		{"plus empty", `root ::= [a-c]+`, "", true, false},
		{"neg class", `root ::= [^a]+`, "bcd", true, true},
		{"neg class hit", `root ::= [^a]+`, "bad", false, false},
		{"any utf8", `root ::= .+`, "héllo→😀", true, true},
		{"any rejects bad utf8", `root ::= .+`, "\xff", false, false},
		{"any rejects surrogate", `root ::= .+`, "\xed\xa0\x80", false, false},
		{"unicode range", `root ::= [ぁ-ゟ]+`, "ひらがな", true, true},
		{"unicode range miss", `root ::= [ぁ-ゟ]+`, "カ", false, false},
		{"escape", `root ::= "\x41\u00e9\n"`, "Aé\n", true, true},
		{"counted", `root ::= "a"{2,3}`, "aaa", true, true},
		{"counted short", `root ::= "a"{2,3}`, "a", true, false},
		{"counted long", `root ::= "a"{2,3}`, "aaaa", false, false},
		{"counted min", `root ::= "a"{2,}`, "aaaaaaa", true, true},
		{"exact", `root ::= "a"{2}`, "aa", true, true},
		{"nullable star", `root ::= ("a"?)* "b"`, "aab", true, true},
		{"tail cycle", "root ::= a\na ::= b | \"x\"\nb ::= a | \"y\"", "y", true, true},
		{"json", string(json), `{"a": [1, 2.5e3, "x\u00e9y", true, null], "b": {}}`, true, true},
		{"json bad", string(json), `{"a": [1,]}`, false, false},
		{"json partial", string(json), `{"a": [1, 2`, true, false},
		{"nested deep", string(json), `{"a":` + repeat("[", 500) + repeat("]", 500) + "}", true, true},
	}
	v, eog := byteVocab(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := grammar.Compile(tt.src)
			require.NoError(t, err)
			m := grammar.NewMatcher(g, v)
			err = m.AcceptBytes([]byte(tt.input))
			if !tt.prefix {
				require.ErrorIs(t, err, grammar.ErrRejected)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.full, m.Done())
			mk := m.Mask()
			assert.Equal(t, tt.full, mk[eog/32]&(1<<(eog%32)) != 0, "eog bit")
			if tt.full {
				require.NoError(t, m.Accept(eog))
				assert.ErrorIs(t, m.Accept('a'), grammar.ErrRejected)
			} else {
				assert.ErrorIs(t, m.Accept(eog), grammar.ErrRejected)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// TestMaskAgreesWithAccept: a token's mask bit is set exactly when Accept
// takes it, at every position of a JSON document, for a vocabulary of
// overlapping multi-byte tokens.
func TestMaskAgreesWithAccept(t *testing.T) {
	json, err := os.ReadFile("testdata/json.gbnf")
	require.NoError(t, err)
	g, err := grammar.Compile(string(json))
	require.NoError(t, err)
	extra := []string{`{"`, `":`, `": `, `",`, `"}`, `}}`, `]}`, `[1`, `, "`, `true`, `tr`, `ue`, `null`, `1.`, `.5`, `e3`, `\u`, `00`, `é`, "\xc3", "\xa9", `😀`, "\xf0\x9f", "\x98\x80", ` {`, `\n`, `a"`, `"a`, `ab`}
	v, eog := byteVocab(t, extra...)
	doc := `{"a": [1, 2.5e3, "x\u00e9yé😀", true, null], "b": {"c": []}}`
	m := grammar.NewMatcher(g, v)
	probe := grammar.NewMatcher(g, v) // its own memo tables, reused through Reset
	for i := 0; i <= len(doc); i++ {
		mk := m.Mask()
		for id := int32(0); id < int32(v.Size()); id++ {
			probe.Reset()
			require.NoError(t, probe.AcceptBytes([]byte(doc[:i])))
			allowed := mk[id/32]&(1<<(id%32)) != 0
			assert.Equal(t, probe.Accept(id) == nil, allowed, "at %d token %d %q", i, id, v.Piece(id))
		}
		if i < len(doc) {
			require.NoError(t, m.Accept(int32(doc[i])))
		}
	}
	require.NoError(t, m.Accept(eog))
}

// TestSchemaErrorsSayItOnce: a SchemaError made from another error of the
// package says "grammar: " and its kind once ("unsupported: pattern at #:
// pattern …", not "…: grammar: unsupported: pattern …").
func TestSchemaErrorsSayItOnce(t *testing.T) {
	for _, tt := range []struct{ schema, want string }{
		{`{bad`, `grammar: invalid JSON schema: schema at #: invalid JSON: expecting a key at offset 1`},
		{`{"pattern":"("}`, `grammar: unsupported: pattern at #: pattern "(" at offset 1: missing )`},
		{`{"$ref":"#/x"}`, `grammar: unsupported: $ref at #: reference "#/x": no "x"`},
		{`{"type":"integer","minimum":"a"}`, `grammar: invalid JSON schema: minimum at #: minimum is not a number`},
	} {
		_, err := grammar.FromJSONSchema([]byte(tt.schema))
		var se *grammar.SchemaError
		require.ErrorAs(t, err, &se, tt.schema)
		assert.Equal(t, tt.want, err.Error(), tt.schema)
	}
}
