package grammar_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// randomVocab is every byte, an EOG and n random tokens of 2 to 24 bytes
// drawn from letters, digits, JSON punctuation and multi-byte characters
// (whole or cut), so tokens cross string ends, counter ends and UTF-8
// boundaries.
func randomVocab(t *testing.T, seed uint64, n int) (*grammar.Vocab, int32) {
	r := rand.New(rand.NewPCG(seed, 1))
	parts := []string{"a", "b", "e", "x", "z", "1", "0", `"`, `\`, `\n`, `\u00e9`, ",", ":", "{", "}", "[", "]", " ", "é", "€", "😀", "\xe2\x82", "\xac", "ab", "name", "na", "me", "id"}
	var extra []string
	for range n {
		k := 2 + r.IntN(23)
		var s []byte
		for len(s) < k {
			s = append(s, parts[r.IntN(len(parts))]...)
		}
		extra = append(extra, string(s[:k]))
	}
	return byteVocab(t, extra...)
}

// TestCounterMaskAgreesWithAccept: for counted repetitions (whose masks
// come from their unbounded twins), free object keys and strings, a
// token's mask bit is set exactly when Accept takes it, at every byte of
// documents that run to and past the counts.
func TestCounterMaskAgreesWithAccept(t *testing.T) {
	tests := []struct {
		name, gbnf string
		docs       []string
	}{
		{"string max 12", `root ::= "\"" [^"\\]{0,12} "\"" [a-z]*`,
			[]string{`"abcdefghijkl"xyz`, `"a"b`, `"abcdefghijklm"`}},
		{"loop after count", `root ::= [a-z]{0,6} [a-z0-9]* "."`,
			[]string{`abcdefghij1.`, `ab.`, `abcdef0.`}},
		{"utf-8 count", `root ::= "\"" [^"\\]{0,9} "\""`,
			[]string{`"éé€😀abcd"`, `"€€€€€€€€€"`, `"😀😀😀😀😀😀😀😀😀😀"`}},
		{"min length", `root ::= "\"" [^"\\]{1,9} "\"" [a-z]*`,
			[]string{`"abzexnamei"`, `"a"`}},
		{"min and max", `root ::= "[" [a-z]{2,10} ( "," [a-z]{0,5} ){0,7} "]"`,
			[]string{`[ab,,abcde,x]`, `[abcdefghij,a,b,c,d,e,f,g]`, `[abcdefghijk]`}},
	}
	schemas := []struct {
		name, schema string
		docs         []string
	}{
		{"maxLength and free keys", `{"type":"object","properties":{"name":{"type":"string","maxLength":10},"id":{"type":"string","maxLength":40}},"additionalProperties":{"type":"string","maxLength":5}}`,
			[]string{`{"name":"abcdefghij","id":"x","nab":"12345"}`, `{"id":"éé€😀\u00e9\n","na":"","é":"a"}`, `{"name":"abcdefghijk"}`}},
		{"array of strings", `{"type":"array","items":{"type":"string","maxLength":8},"maxItems":5}`,
			[]string{`["abcdefgh","","a\"b","1","2"]`, `["a","b","c","d","e","f"]`}},
	}
	for _, s := range schemas {
		src, err := grammar.FromJSONSchema([]byte(s.schema))
		require.NoError(t, err, s.name)
		tests = append(tests, struct {
			name, gbnf string
			docs       []string
		}{s.name, src, s.docs})
	}
	v, _ := randomVocab(t, 7, 600)
	defer grammar.SkipAll()()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := grammar.Compile(tt.gbnf)
			require.NoError(t, err)
			for _, doc := range tt.docs {
				m := grammar.NewMatcher(g, v)
				probe := grammar.NewMatcher(g, v)
				for i := 0; i <= len(doc); i++ {
					mk := m.Mask()
					for id := int32(0); id < int32(v.Size()); id++ {
						probe.Reset()
						require.NoError(t, probe.AcceptBytes([]byte(doc[:i])))
						allowed := mk[id/32]&(1<<(id%32)) != 0
						if (probe.Accept(id) == nil) != allowed {
							t.Fatalf("%s after %q: token %d %q: mask %v, Accept disagrees", doc, doc[:i], id, v.Piece(id), allowed)
						}
					}
					if i == len(doc) || m.AcceptBytes([]byte{doc[i]}) != nil {
						break
					}
				}
			}
		})
	}
}
