package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// randomText builds a string from pieces that stress tokenizers: words,
// runs of spaces and newlines, digits, punctuation, CJK, emoji (with ZWJ
// sequences and skin tones), combining marks, other scripts and, when
// invalid is set, bytes that are not UTF-8.
func randomText(r *rand.Rand, invalid bool) string {
	parts := []func() string{
		func() string { return []string{"Hello", "world", "the", "I'm", "don't", "WE'LL", "x"}[r.IntN(7)] },
		func() string { return strings.Repeat(" ", 1+r.IntN(4)) },
		func() string { return []string{"\n", "\n\n", "\r\n", "\t", " \n ", "\u00a0", "\u3000"}[r.IntN(7)] },
		func() string { return strings.Repeat("7", 1+r.IntN(7)) },
		func() string { return []string{".", ",", "!?", "(", ")", "'", "\"", "--", "...", "$", "#"}[r.IntN(11)] },
		func() string { return string(rune(0x4E00 + r.IntN(0x5000))) },
		func() string { return string(rune(0xAC00 + r.IntN(0x2000))) },
		func() string {
			return []string{"😀", "🦙", "👍🏽", "👨‍👩‍👧", "😶‍🌫️", "🇯🇵", "✅"}[r.IntN(7)]
		},
		func() string { return "e" + string(rune(0x0300+r.IntN(0x70))) },
		func() string {
			return []string{"Привет", "مرحبا", "नमस्ते", "γειά", "ក្រុង", "שלום"}[r.IntN(6)]
		},
		func() string { return string(rune(0x20 + r.IntN(0x2FFE0))) },
	}
	if invalid {
		parts = append(parts, func() string {
			return []string{"\x80", "\xff", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xbf\xbf"}[r.IntN(6)]
		})
	}
	var b strings.Builder
	for n := 1 + r.IntN(12); n > 0; n-- {
		b.WriteString(parts[r.IntN(len(parts))]())
	}
	return b.String()
}

// replaceInvalid replaces each byte that is not part of valid UTF-8 with
// U+FFFD, as llama.cpp's byte-level BPE does before encoding.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// TestRoundTrip checks Decode(Encode(s)) == s on random text for every
// vocabulary, with each type's documented exceptions:
//   - SentencePiece adds one leading space, which Decode removes; invalid
//     UTF-8 survives through <0xNN> byte fallback, except that a lead byte
//     swallows the bytes after it (SentencePiece splits by the length the
//     lead byte announces), so a space right after it comes back as the
//     escaped "▁" (llama.cpp does the same).
//   - Byte-level BPE replaces every invalid byte with U+FFFD.
func TestRoundTrip(t *testing.T) {
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tok := loadVocab(t, name)
			r := rand.New(rand.NewPCG(1, uint64(len(name))))
			for i := 0; i < 400; i++ {
				s := randomText(r, i%2 == 1)
				ids := tok.Encode(s, EncodeOptions{})
				for _, id := range ids {
					require.True(t, id >= 0 && int(id) < tok.Size())
				}
				want := s
				if tok.Model() == ModelBPE {
					want = replaceInvalid(s)
				}
				got := string(tok.Decode(ids))
				if tok.Model() == ModelSPM && !utf8.ValidString(s) {
					got = strings.ReplaceAll(got, spmSpace, " ")
				}
				require.Equal(t, want, got, "text %q ids %v", s, ids)
			}
		})
	}
}
