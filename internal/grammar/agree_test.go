package grammar_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// checkAgreement walks m for up to steps tokens, picking each next token
// with pick among those the mask allows, and fails at the first token
// whose mask bit and Accept disagree. It returns the text accepted.
func checkAgreement(t *testing.T, m *grammar.Matcher, pieces [][]byte, steps int, pick func(n int) int) string {
	t.Helper()
	var out strings.Builder
	for step := range steps {
		mk := m.Mask()
		var ok []int32
		for id := range int32(len(pieces)) {
			allowed := mk[id>>5]>>(id&31)&1 != 0
			if a := m.Allows(id); allowed != a {
				t.Fatalf("after %q (step %d), token %d %q: mask allows %v, Accept %v", out.String(), step, id, pieces[id], allowed, a)
			}
			if allowed {
				ok = append(ok, id)
			}
		}
		if len(ok) == 0 {
			break
		}
		id := ok[pick(len(ok))]
		require.NoError(t, m.Accept(id))
		out.Write(pieces[id])
	}
	return out.String()
}

// TestMaskAgreesUnderAmbiguity: grammars whose parses multiply (nested counted
// repetitions) keep the mask and Accept in agreement on every token, on
// random walks of a small vocabulary (issue 32's 500 "a token the grammar
// refuses was accepted").
func TestMaskAgreesUnderAmbiguity(t *testing.T) {
	var pieces [][]byte
	for _, s := range []string{"a", "b", "c", "d", "aa", "aaa", "aaaa", "ab", "abab", "ba", "aab", "abb",
		"aaaaaaaa", "abababab", strings.Repeat("a", 32), strings.Repeat("ab", 16)} {
		pieces = append(pieces, []byte(s))
	}
	v, err := grammar.NewVocab(pieces, nil)
	require.NoError(t, err)
	for _, src := range []string{
		`root ::= ("a"{0,300}){0,300}`,
		`root ::= ("ab"{0,300}){0,300}`,
		`root ::= ("a"{1,300}){2,300} "b"`,
		`root ::= (("a"{0,20}){0,20}){0,20}`,
		"root ::= r{0,300}\nr ::= \"a\"{0,300}",
		"root ::= r{0,300} \"b\"\nr ::= \"ab\"{0,300}",
		`root ::= ("a"{0,300} "b"?){0,300}`,
		`root ::= ("a"{2,3}){0,100} "b"`,
	} {
		t.Run(src, func(t *testing.T) {
			g, err := grammar.Compile(src)
			require.NoError(t, err)
			for seed := range 4 {
				r := rand.New(rand.NewPCG(uint64(seed), 1))
				checkAgreement(t, grammar.NewMatcher(g, v), pieces, 48, r.IntN)
			}
		})
	}
}

// TestNestedRepeatFlattens: (x{a,b}){c,d} is x{c·a,d·b} where the counts
// form one interval, and keeps its exact language where they do not.
func TestNestedRepeatFlattens(t *testing.T) {
	tests := []struct {
		src     string
		yes, no []int // counts of "a" the grammar accepts / refuses
	}{
		{`root ::= ("a"{0,300}){0,300}`, []int{0, 1, 300, 301, 5000}, nil},
		{`root ::= ("a"{0,30}){0,30}`, []int{0, 31, 900}, []int{901}},
		{`root ::= (("a"?){0,30}){1,30}`, []int{0, 31, 900}, []int{901}},
		{`root ::= ("a"{2,3}){0,2}`, []int{0, 2, 3, 4, 5, 6}, []int{1, 7}},
		{`root ::= ("a"{2,3}){1,}`, []int{2, 3, 4, 5, 6, 7, 100}, []int{0, 1}},
		{`root ::= ("a"{3}){0,3}`, []int{0, 3, 6, 9}, []int{1, 2, 4, 5, 7, 8, 10}},
		{`root ::= ("a"*){2,5}`, []int{0, 1, 2, 50}, nil},
		{`root ::= ("a"+){2,5}`, []int{2, 3, 50}, []int{0, 1}},
		{`root ::= ("a"?){3}`, []int{0, 1, 2, 3}, []int{4}},
	}
	v, eog := byteVocab(t)
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			g, err := grammar.Compile(tt.src)
			require.NoError(t, err)
			for _, want := range []struct {
				counts []int
				ok     bool
			}{{tt.yes, true}, {tt.no, false}} {
				for _, n := range want.counts {
					m := grammar.NewMatcher(g, v)
					err := m.AcceptBytes([]byte(strings.Repeat("a", n)))
					if err == nil {
						err = m.Accept(eog)
					}
					require.Equal(t, want.ok, err == nil, "a×"+strconv.Itoa(n))
				}
			}
		})
	}
}

// genGrammar writes a GBNF grammar read from fuzz bytes: nested counted
// repetitions, alternations, literals, character classes (negated ones
// and UTF-8 ranges of every length) and a rule referenced from several
// places.
type genGrammar struct {
	b []byte
	i int
}

func (g *genGrammar) next() int {
	if g.i >= len(g.b) {
		return 0
	}
	g.i++
	return int(g.b[g.i-1])
}

var genAtoms = []string{`"a"`, `"b"`, `"ab"`, `"é"`, `"€"`, `"😀"`, `[a-c]`, `[^a]`, `[à-ÿ]`, `[Ā-߿]`, `[ࠀ-￿]`, `[𐀀-😀]`, `[ab€]`, `r`, `""`}

func (g *genGrammar) expr(depth int) string {
	op := g.next() % 7
	if depth >= 4 {
		op = 0
	}
	switch op {
	case 1, 2:
		return "(" + g.expr(depth+1) + " " + g.expr(depth+1) + ")"
	case 3:
		return "(" + g.expr(depth+1) + " | " + g.expr(depth+1) + ")"
	case 4, 5:
		lo := g.next() % 6
		hi := lo + g.next()%40
		return "(" + g.expr(depth+1) + "){" + strconv.Itoa(lo) + "," + strconv.Itoa(hi) + "}"
	case 6:
		return "(" + g.expr(depth+1) + ")" + []string{"*", "+", "?"}[g.next()%3]
	}
	return genAtoms[g.next()%len(genAtoms)]
}

// FuzzMaskAgreesWithAccept: for generated grammars and vocabularies, every
// bit of every mask along a walk agrees with Accept on that token (the
// invariant behind the processor's per-token check).
//
//	go test ./internal/grammar -run XXX -fuzz FuzzMaskAgreesWithAccept -fuzztime 60s
func FuzzMaskAgreesWithAccept(f *testing.F) {
	f.Add([]byte{4, 4, 0, 20, 0, 0, 0}, []byte("a|aa|aaa|aaaa"), uint64(1))
	f.Add([]byte{5, 0, 30, 4, 0, 30, 2}, []byte("ab|a|b|abab"), uint64(2))
	f.Add([]byte{3, 1, 0, 3, 6, 9, 2, 10, 11}, []byte("é|\xc3|\xa9|€|\xe2\x82|😀|\xf0\x9f|a"), uint64(3))
	f.Add([]byte{6, 1, 13, 4, 2, 5, 7}, []byte("a€|ÿ|߿|ab€"), uint64(4))
	f.Fuzz(func(t *testing.T, gram, vocab []byte, seed uint64) {
		if len(gram) > 64 || len(vocab) > 256 {
			return
		}
		gen := &genGrammar{b: gram}
		src := "root ::= " + gen.expr(0) + "\nr ::= " + gen.expr(2) + "\n"
		g, err := grammar.Compile(src)
		if err != nil {
			return // left recursion cannot occur; too large can
		}
		// the vocabulary: every atom's first byte and character, then the
		// fuzzer's pieces ('|'-separated), then an end of generation
		pieces := [][]byte{[]byte("a"), []byte("b"), []byte("é"), []byte("€"), []byte("😀"), {0xc3}, {0xa9}, {0xf0}, []byte("ÿ")}
		for p := range strings.SplitSeq(string(vocab), "|") {
			if p != "" && len(p) <= 16 {
				pieces = append(pieces, []byte(p))
			}
		}
		kinds := make([]grammar.TokenKind, len(pieces), len(pieces)+1)
		pieces, kinds = append(pieces, []byte("</s>")), append(kinds, grammar.TokenEOG)
		v, err := grammar.NewVocab(pieces, kinds)
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(seed, 0))
		checkAgreement(t, grammar.NewMatcher(g, v), pieces, 24, r.IntN)
	})
}
