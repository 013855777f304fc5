package grammar_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/realizar-host/realizar-host/grammar"
)

// FuzzCompile: any input compiles or fails with an error, never panics or
// hangs, and a compiled grammar's matcher survives a mask and a few bytes.
//
//	go test ./grammar -run XXX -fuzz FuzzCompile -fuzztime 60s
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
