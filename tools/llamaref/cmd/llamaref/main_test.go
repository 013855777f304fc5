package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
)

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"help"}, &out))
	assert.Contains(t, out.String(), "Q4_K_M")
	for _, args := range [][]string{{"nope"}, {"quantize", "a"}, {"tensors"}, {"detokenize", "m"}} {
		err := run(args, &out)
		assert.ErrorIs(t, err, errUsage, "%v", args)
	}
}

func TestTokenizeCommand(t *testing.T) {
	l := reftest.Lib(t)
	vocab := reftest.Vocab(t, l, "llama-spm")
	var out bytes.Buffer
	require.NoError(t, run([]string{"tokenize", "-special=false", vocab, "Hello world"}, &out))
	m, err := l.LoadVocab(vocab)
	require.NoError(t, err)
	defer m.Close()
	ids, err := m.Tokenize("Hello world", false, false)
	require.NoError(t, err)
	assert.Equal(t, joinIDs(ids), strings.TrimSpace(out.String()))
}

func TestGreedyCommand(t *testing.T) {
	reftest.Lib(t)
	model := reftest.SharedModel(t, "stories260K.gguf")
	var out bytes.Buffer
	require.NoError(t, run([]string{"greedy", "-n", "8", "-ignore-eog", model, "Once upon a time"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Len(t, strings.Fields(lines[0]), 8)
	assert.Contains(t, lines[1], "Once upon a time, there was a little girl")
}
