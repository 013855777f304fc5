package grammar_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// FuzzCompile: any input compiles or fails with an error, never panics or
// hangs, and a compiled grammar's matcher survives a mask and a few bytes.
//
//	go test ./internal/grammar -run XXX -fuzz FuzzCompile -fuzztime 60s
func FuzzCompile(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.gbnf")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), "{\"a\": 1}")
		}
	}
	f.Add(`root ::= ("a"?)* "b"{2,5} [^\x00-\x1F]`, "aabb")
	f.Add("root ::= a\na ::= b | \"x\"\nb ::= a", "x")
	pieces := [][]byte{}
	for b := range 256 {
		pieces = append(pieces, []byte{byte(b)})
	}
	pieces = append(pieces, []byte("ab"), []byte("\"}"), []byte("é"))
	v, err := grammar.NewVocab(pieces, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src, input string) {
		if len(src) > 4096 {
			return
		}
		g, err := grammar.Compile(src)
		if err != nil {
			return
		}
		m := grammar.NewMatcher(g, v)
		m.Mask()
		for i := 0; i < len(input) && i < 64; i++ {
			if m.Accept(int32(input[i])) != nil {
				break
			}
			m.Mask()
		}
	})
}

// FuzzFromJSONSchema: any schema converts or fails with an error, never
// panics or hangs, and what it writes compiles.
//
//	go test ./internal/grammar -run XXX -fuzz FuzzFromJSONSchema -fuzztime 60s
func FuzzFromJSONSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","minimum":-3,"maximum":70}},"required":["a"]}`,
		`{"anyOf":[{"type":"string","pattern":"^a(b|c)*d{2,3}$"},{"enum":[1,"x",null]}]}`,
		`{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"},"maxItems":2}},"$ref":"#/$defs/n"}`,
		`{"allOf":[{"properties":{"a":{}}},{"required":["a"]}],"type":"object"}`,
		`{"type":"string","format":"date-time"}`,
		`{"type":"number","exclusiveMinimum":-0.25,"maximum":12.05}`,
		`{"type":"array","prefixItems":[{"const":1}],"items":false,"minItems":1}`,
		`{"type":"string","format":"email","pattern":"^[a-z.]+@[a-z]+\\.[a-z]{2,}$","maxLength":12}`,
		`{"type":"object","patternProperties":{"^x[0-9]+$":{"type":"integer"},"^y":{}},"additionalProperties":false,"maxProperties":2}`,
		`{"type":"object","properties":{"a":{},"b":{}},"oneOf":[{"required":["a"]},{"required":["b"]}],"not":{"required":["a","b"]}}`,
		`{"enum":[{"a":1},{"a":"x"}],"properties":{"a":{"type":"integer"}},"required":["a"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if len(schema) > 2048 {
			return
		}
		src, err := grammar.FromJSONSchema([]byte(schema))
		if err != nil {
			return
		}
		if _, err := grammar.Compile(src); err != nil && !errors.Is(err, grammar.ErrTooLarge) && !errors.Is(err, grammar.ErrLeftRecursion) {
			t.Fatalf("schema %s wrote a grammar that does not compile: %v", schema, err)
		}
	})
}
