package parity

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/tokenizer"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// tokenizerVocabs are the vocabularies issue 4's tokenizer is held to, then
// further ones it implements.
var tokenizerVocabs = []string{"llama-spm", "llama-bpe", "qwen2", "gpt-2", "phi-3", "mpt", "qwen35"}

// openVocabPair loads vocabulary name with both llama.cpp and package
// tokenizer.
func openVocabPair(t testing.TB, l *ref.Lib, name string) (*ref.Model, *tokenizer.Tokenizer) {
	t.Helper()
	path := reftest.Vocab(t, l, name)
	m, err := l.LoadVocab(path)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	tok, err := tokenizer.Open(path)
	require.NoError(t, err)
	return m, tok
}

// randomTokenizerText mixes words, whitespace runs, digits, punctuation,
// CJK, emoji, combining marks, other scripts, special-token texts and bytes
// that are not UTF-8. (It never forms a code point above U+10FFFF, on which
// llama.cpp aborts.)
func randomTokenizerText(r *rand.Rand) string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	parts := []func() string{
		func() string { return pick("Hello", "world", "the", "I'm", "don't", "WE'LL", "x", "naïve", "Straße") },
		func() string { return strings.Repeat(" ", 1+r.IntN(4)) },
		func() string { return pick("\n", "\n\n", "\r\n", "\t", " \n ", "\u00a0", "\u3000", "\u2581") },
		func() string { return strings.Repeat(pick("3", "7", "٣"), 1+r.IntN(7)) },
		func() string { return pick(".", ",", "!?", "(", ")", "'", "\"", "--", "...", "$", "#", "'s", "'LL") },
		func() string { return string(rune(0x4E00 + r.IntN(0x5000))) },
		func() string {
			return pick("😀", "🦙", "👍🏽", "👨‍👩‍👧", "😶‍🌫️", "🇯🇵", "✅", "🥐")
		},
		func() string { return "e" + string(rune(0x0300+r.IntN(0x70))) },
		func() string {
			return pick("Привет", "مرحبا", "नमस्ते", "γειά", "ក្រុង", "שלום", "한국어")
		},
		func() string { return string(rune(0x20 + r.IntN(0xD7E0))) },
		func() string {
			return pick("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<|eot_id|>",
				"<|begin_of_text|>", "[PAD151646]", "<unk>", "<|user|>\n", "<|end|> ")
		},
		func() string { return pick("\x80", "\xff", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xbf\xbf", "\xc1\x96") },
	}
	var b strings.Builder
	for n := 1 + r.IntN(14); n > 0; n-- {
		b.WriteString(parts[r.IntN(len(parts))]())
	}
	return b.String()
}

// TestTokenizerDifferential encodes 400 random strings per vocabulary with
// llama.cpp and with package tokenizer, under all four add_special /
// parse_special combinations, and requires identical ids. It also compares
// every token's piece and end-of-generation flag, and the fixed cases of
// bosTextCases.
func TestTokenizerDifferential(t *testing.T) {
	l := reftest.Lib(t)
	var addsBOS []string // vocabularies on which bosTextCases checked two BOS ids
	t.Cleanup(func() {
		if !t.Failed() && len(addsBOS) == 0 {
			t.Error("no vocabulary adds BOS: the case of two BOS ids went unchecked")
		}
		t.Logf("two BOS ids for a text that starts with BOS, as llama.cpp: %v", addsBOS)
	})
	for i, name := range tokenizerVocabs {
		t.Run(name, func(t *testing.T) {
			m, tok := openVocabPair(t, l, name)
			require.Equal(t, m.NVocab(), tok.Size())
			r := rand.New(rand.NewPCG(4, uint64(i)))
			const n = 400
			agree := 0
			for k := 0; k < n; k++ {
				text := randomTokenizerText(r)
				opts := tokenizer.EncodeOptions{AddSpecial: k&1 != 0, ParseSpecial: k&2 != 0}
				want, err := m.Tokenize(text, opts.AddSpecial, opts.ParseSpecial)
				require.NoError(t, err)
				got := tok.Encode(text, opts)
				if assert.Equal(t, nonNilIDs(want), nonNilIDs(got), "text %q %+v", text, opts) {
					agree++
				}
			}
			t.Logf("%s: %d/%d random strings encode identically", name, agree, n)
			if bosTextCases(t, m, tok) {
				addsBOS = append(addsBOS, name)
			}

			pieces, eog := 0, 0
			text := tok.Renderer(tokenizer.RenderOptions{})
			for id := int32(0); int(id) < tok.Size(); id++ {
				p, err := m.Piece(id, true)
				require.NoError(t, err)
				shown := assert.Equal(t, string(p), string(tok.Piece(id)), "piece %d", id)
				p, err = m.Piece(id, false)
				require.NoError(t, err)
				if assert.Equal(t, string(p), string(text.Piece(id)), "piece %d, special=false", id) && shown {
					pieces++
				}
				if assert.Equal(t, m.IsEOG(id), tok.IsEOG(id), "IsEOG(%d)", id) {
					eog++
				}
			}
			t.Logf("%s: %d/%d pieces (special true and false) and %d/%d EOG flags agree", name, pieces, tok.Size(), eog, tok.Size())
			detokenizeCases(t, m, tok)
		})
	}
}

// detokenizeCases: Decode and Renderer.Decode agree with
// llama_detokenize (remove_special false, unparse_special true and false)
// on ids with control tokens first, inside and last.
func detokenizeCases(t *testing.T, m *ref.Model, tok *tokenizer.Tokenizer) {
	t.Helper()
	words := tok.Encode(" Hello world", tokenizer.EncodeOptions{})
	var control []int32
	for _, id := range []int32{tok.BOS(), tok.EOS(), tok.EOT()} {
		if id != tokenizer.Absent {
			control = append(control, id)
		}
	}
	for _, c := range control {
		for _, ids := range [][]int32{
			append([]int32{c}, words...),
			append(append(slices.Clone(words[:1]), c), words[1:]...),
			append(slices.Clone(words), c),
			{c, c},
		} {
			for _, special := range []bool{false, true} {
				want, err := m.Detokenize(ids, false, special)
				require.NoError(t, err)
				assert.Equal(t, want, string(tok.Renderer(tokenizer.RenderOptions{Special: special}).Decode(ids)), "ids %v special %v", ids, special)
				if special {
					assert.Equal(t, want, string(tok.Decode(ids)), "Decode(%v)", ids)
				}
			}
		}
	}
}

// bosTextCases is the held-back case of issue 22.6, fixed rather than
// left to the random strings: a text that itself begins with the BOS
// token's text (as a rendered chat template may), encoded with
// add_special, keeps both BOS ids in llama.cpp (llama_tokenize adds one
// and parses the other), and so it must here. Also the BOS text alone,
// twice, after a space and mid-text, under all four add_special /
// parse_special combinations. It reports whether tok adds BOS (the
// case itself was checked); a vocabulary without a BOS has no case.
func bosTextCases(t *testing.T, m *ref.Model, tok *tokenizer.Tokenizer) (addsBOS bool) {
	t.Helper()
	if tok.BOS() == tokenizer.Absent {
		return false
	}
	bos := tok.TokenText(tok.BOS())
	for _, text := range []string{bos + "Hello world", bos, bos + bos + "x", " " + bos + "Hi", "Hi " + bos + "\n", bos + "\n" + bos} {
		for k := range 4 {
			opts := tokenizer.EncodeOptions{AddSpecial: k&1 != 0, ParseSpecial: k&2 != 0}
			want, err := m.Tokenize(text, opts.AddSpecial, opts.ParseSpecial)
			require.NoError(t, err)
			assert.Equal(t, nonNilIDs(want), nonNilIDs(tok.Encode(text, opts)), "BOS text case %q %+v", text, opts)
		}
	}
	if !tok.AddBOS() {
		return false
	}
	ids := tok.Encode(bos+"Hello", tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
	assert.Equal(t, []int32{tok.BOS(), tok.BOS()}, ids[:2], "BOS added and BOS parsed: both ids")
	return true
}

func nonNilIDs(x []int32) []int32 {
	if x == nil {
		return []int32{}
	}
	return x
}

// TestTokenizerThroughput encodes the same text (tokenizer/testdata/bench.txt
// repeated 16 times) with llama.cpp and package tokenizer, alternating, and
// logs both rates and their ratio from this one run (best of five rounds
// each, single-threaded both). The figures go to BENCHMARKS.md.
func TestTokenizerThroughput(t *testing.T) {
	l := reftest.Lib(t)
	src, err := os.ReadFile("../../../tokenizer/testdata/bench.txt")
	require.NoError(t, err)
	text := strings.Repeat(string(src), 16)
	for _, name := range tokenizerVocabs {
		t.Run(name, func(t *testing.T) {
			m, tok := openVocabPair(t, l, name)
			var bestRef, bestGo time.Duration
			for round := 0; round < 5; round++ {
				start := time.Now()
				want, err := m.Tokenize(text, false, false)
				require.NoError(t, err)
				// ref.Model.Tokenize calls llama_tokenize twice (a size
				// query, then the fill), and each call tokenizes the
				// whole text: one tokenization is half the time.
				dRef := time.Since(start) / 2
				start = time.Now()
				got := tok.Encode(text, tokenizer.EncodeOptions{})
				dGo := time.Since(start)
				require.Equal(t, want, got)
				if round == 0 || dRef < bestRef {
					bestRef = dRef
				}
				if round == 0 || dGo < bestGo {
					bestGo = dGo
				}
			}
			mbps := func(d time.Duration) float64 { return float64(len(text)) / d.Seconds() / 1e6 }
			t.Logf("%s: %d bytes; llama.cpp %.2f MB/s, tokenizer %.2f MB/s, ratio %.2fx",
				name, len(text), mbps(bestRef), mbps(bestGo), mbps(bestGo)/mbps(bestRef))
		})
	}
}
