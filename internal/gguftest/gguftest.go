// Package gguftest builds small GGUF inputs for tests of the packages that
// read or write model files.
package gguftest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
)

// Vocab returns a vocabulary-only GGUF of n tokens named t0, t1, … with
// the llama tokenizer model: enough for the fixture generator, and small
// enough to keep a fixture's embedding matrices (and its test) small.
func Vocab(t testing.TB, n int) *gguf.File {
	t.Helper()
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("t%d", i)
	}
	var buf bytes.Buffer
	require.NoError(t, gguf.Write(&buf, []gguf.KV{
		{Key: gguf.KeyTokenizerModel, Value: "llama"},
		{Key: gguf.KeyTokens, Value: tokens},
	}, nil))
	f, err := gguf.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	return f
}
