package gguf

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkNewFileVocab parses the metadata of a 150000-token BPE vocabulary
// (tokens, token types and merges), the bulk of a Qwen2 file's header.
func BenchmarkNewFileVocab(b *testing.B) {
	const n = 150000
	tokens := make([]string, n)
	merges := make([]string, n)
	types := make([]int32, n)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("tok%d", i)
		merges[i] = fmt.Sprintf("t%d o%d", i, i)
		types[i] = 1
	}
	var buf bytes.Buffer
	if err := Write(&buf, []KV{
		{KeyTokens, tokens}, {KeyTokenTypes, types}, {KeyMerges, merges},
	}, nil); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewFile(bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}
