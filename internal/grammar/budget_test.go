package grammar_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// TestMaskWithinCloses: random walks that take any token MaskWithin
// allows with the tokens left end, when the budget runs out, where the
// grammar may end, for schemas with unbounded strings and arrays and
// grammars with nested rules; MaskWithin only narrows Mask. Given one
// token more than the shortest completion and asked to keep the last for
// end of generation (left < 0: end of generation alone), every walk ends
// by end of generation.
func TestMaskWithinCloses(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name","tags"]}`,
		`{"type":"array","items":{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"]},"minItems":1}`,
		`{"type":"object","properties":{"s":{"type":"string","minLength":5},"n":{"type":"number"},"o":{"type":"object","additionalProperties":{"type":"string"}}},"required":["s","n","o"]}`,
	}
	var srcs []string
	for _, s := range schemas {
		src, err := grammar.FromJSONSchema([]byte(s))
		require.NoError(t, err)
		srcs = append(srcs, src)
	}
	srcs = append(srcs, `root ::= "(" root ")" | "[" ("x" | root)* "]" | [a-z]+ "!"`,
		`root ::= ("a"{0,300}){0,300} "b" ("c" | "dd")`)
	v, eog := byteVocab(t, `{"`, `":`, `": "`, `",`, `"}`, `]}`, `["`, `"]`, `, "`, `1.`, `e3`, `true`, `hello`, ` world`, `aaaa`, `((`, `[[`, `é`)
	for _, src := range srcs {
		g, err := grammar.Compile(src)
		require.NoError(t, err)
		m := grammar.NewMatcher(g, v)
		require.True(t, m.CanClose())
		short := m.Shortest()
		for _, budget := range []int{short, short + 1, short + 7, 40, 64} {
			// the grammar processor keeps the last token for end of
			// generation: with one token to spare, every walk ends by it
			if budget > short {
				for seed := range 6 {
					r := rand.New(rand.NewPCG(uint64(seed), uint64(budget)))
					m := grammar.NewMatcher(g, v)
					ended := false
					for step := range budget {
						within := m.MaskWithin(budget - step - 2)
						var ok []int32
						for id := range int32(v.Size()) {
							if within[id>>5]>>(id&31)&1 != 0 {
								ok = append(ok, id)
							}
						}
						require.NotEmpty(t, ok)
						id := ok[r.IntN(len(ok))]
						require.NoError(t, m.Accept(id))
						if ended = id == eog; ended {
							break
						}
					}
					assert.True(t, ended, "%s, budget %d with the last token for end of generation: no end of generation", src, budget)
				}
			}
			for seed := range 6 {
				r := rand.New(rand.NewPCG(uint64(seed), uint64(budget)))
				m := grammar.NewMatcher(g, v)
				text := ""
				for step := range budget {
					within, mask := m.MaskWithin(budget-step-1), m.Mask()
					var ok []int32
					for id := range int32(v.Size()) {
						if within[id>>5]>>(id&31)&1 != 0 {
							require.NotZero(t, mask[id>>5]>>(id&31)&1, "MaskWithin allows token %d that Mask does not", id)
							ok = append(ok, id)
						}
					}
					require.NotEmpty(t, ok, "%s: nothing allowed after %q", src, text)
					id := ok[r.IntN(len(ok))]
					require.NoError(t, m.Accept(id))
					if id == eog {
						break
					}
					text += string(v.Piece(id))
				}
				assert.True(t, m.Done(), "%s, budget %d: %q does not end the grammar", src, budget, text)
			}
		}
	}
}

// TestGrammarShortest: the fewest bytes of a sentence, without a
// vocabulary; -1 where the root has no finite derivation.
func TestGrammarShortest(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{`root ::= "ab" | "c"`, 1},
		{`root ::= "x" [a-z]{2,5} "."`, 4},
		{`root ::= "a"*`, 0},
		{"root ::= r\nr ::= \"(\" r \")\"", -1},
	} {
		g, err := grammar.Compile(tc.src)
		require.NoError(t, err, tc.src)
		assert.Equal(t, tc.want, g.Shortest(), tc.src)
	}
}
