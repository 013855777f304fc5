package tokenizer

import (
	"os"
	"strings"
	"testing"
)

// benchText is testdata/bench.txt repeated to about 50 KB: English prose,
// code, and some accented, Cyrillic, CJK and emoji text.
func benchText(b *testing.B) string {
	b.Helper()
	src, err := os.ReadFile("testdata/bench.txt")
	if err != nil {
		b.Fatal(err)
	}
	return strings.Repeat(string(src), 16)
}

// BenchmarkEncode measures Encode throughput per vocabulary (bytes of input
// text per second; run with -benchtime and compare MB/s).
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, name := range vocabNames {
		b.Run(name, func(b *testing.B) {
			tok := loadVocab(b, name)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Encode(text, EncodeOptions{})
			}
		})
	}
}

// BenchmarkStream measures the streaming detokenizer over the ids of the
// benchmark text (bytes of output text per second).
func BenchmarkStream(b *testing.B) {
	text := benchText(b)
	tok := loadVocab(b, "llama-bpe")
	ids := tok.Encode(text, EncodeOptions{})
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s := NewStream(tok)
		for _, id := range ids {
			s.Add(id)
		}
		s.Flush()
	}
}
