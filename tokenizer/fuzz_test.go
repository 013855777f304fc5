package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzStream cuts data into pieces at the positions in cuts and streams
// them: every chunk must be valid UTF-8, and all chunks together must equal
// the whole input with each invalid byte replaced by U+FFFD.
func FuzzStream(f *testing.F) {
	f.Add([]byte("hello"), []byte{1, 2})
	f.Add([]byte("\U0001F680€é"), []byte{1, 1, 1, 1, 1})
	f.Add([]byte("\xe2\x82x\xff\xf0\x9f"), []byte{2})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		s := NewStream(nil)
		var got []byte
		rest := data
		for _, c := range cuts {
			n := min(int(c)%8, len(rest))
			chunk := s.Write(rest[:n])
			if !utf8.Valid(chunk) {
				t.Fatalf("invalid chunk %q", chunk)
			}
			got = append(got, chunk...)
			rest = rest[n:]
		}
		got = append(got, s.Write(rest)...)
		got = append(got, s.Flush()...)
		if want := replaceInvalid(string(data)); string(got) != want {
			t.Fatalf("stream %q != %q", got, want)
		}
	})
}

// FuzzPretokenize checks that every pre-tokenizer partitions the text: the
// words, in order, are exactly its code points.
func FuzzPretokenize(f *testing.F) {
	for _, s := range []string{"Hello world", "I'm  here\n\n", "3333 x", "\xff\xc3(", "  \r\n\t a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var sp splitter
		for _, p := range []preKind{preGPT2, preLlama3, preQwen2, preQwen35} {
			sp.reset(text, p == preQwen35)
			sp.split(p)
			prev := 0
			for _, end := range sp.ends {
				if end <= prev {
					t.Fatalf("pre %d: empty or backward word at %d", p, end)
				}
				prev = end
			}
			if len(sp.cps) > 0 && prev != len(sp.cps) {
				t.Fatalf("pre %d: words cover %d of %d code points", p, prev, len(sp.cps))
			}
		}
	})
}

// FuzzEncode encodes arbitrary bytes with the small synthetic vocabularies:
// no panic, ids in range, and the round trip holds with the documented
// exceptions (see TestRoundTrip; a literal "▁" decodes as a space; byte-level
// BPE decodes UTF-8 leniently, see TestDecodeRune; SentencePiece text after
// a parsed special token gets llama.cpp's space prefix, which Decode keeps).
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"hello world", " hello", "é\xff", "<|im_start|>hi<|im_end|>", "\xc3 x", "▁"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	spm, bpe := tinySPM(f), tinyBPE(f, "gpt-2")
	slow := tinyBPEWith(f, "gpt-2", []string{"x y"}) // string merge path
	f.Fuzz(func(t *testing.T, text string, parse bool) {
		opts := EncodeOptions{ParseSpecial: parse}
		if a, b := bpe.Encode(text, opts), slow.Encode(text, opts); !equalIDs(a, b) {
			t.Fatalf("merge paths disagree on %q: %v vs %v", text, a, b)
		}
		for _, tok := range []*Tokenizer{spm, bpe} {
			ids := tok.Encode(text, EncodeOptions{AddSpecial: false, ParseSpecial: parse})
			for _, id := range ids {
				if id < 0 || int(id) >= tok.Size() {
					t.Fatalf("id %d out of range", id)
				}
			}
			got := string(tok.Decode(ids))
			want := text
			if tok.Model() == ModelBPE {
				want = lenientUTF8(text)
			} else {
				got = strings.ReplaceAll(got, spmSpace, " ")
				want = strings.ReplaceAll(spmDecoded(tok, text, parse), spmSpace, " ")
			}
			if got != want {
				t.Fatalf("%s: decode(encode(%q)) = %q", tok.Model(), text, got)
			}
		}
	})
}

// spmDecoded is what Decode(Encode(text)) gives with a SentencePiece
// vocabulary: the text, with the space prefix llama.cpp's encoder puts
// before every text fragment that follows a special token (the one before
// the first fragment is the prefix Decode removes).
func spmDecoded(tok *Tokenizer, text string, parse bool) string {
	var b strings.Builder
	prevSpecial := true
	for i, f := range tok.partition(text, parse) {
		if f.token != Absent {
			b.Write(tok.Piece(f.token))
			prevSpecial = true
			continue
		}
		if tok.spacePrefix && prevSpecial && i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.text)
		prevSpecial = false
	}
	return b.String()
}
