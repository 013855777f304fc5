package ref_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// The reference reproduces llama.cpp's own tokenizer vectors: a check of the
// binding, and the count issue 4's tokenizer is held to.
func TestReferenceTokenizerVectors(t *testing.T) {
	l := reftest.Lib(t)
	for _, name := range []string{"llama-spm", "llama-bpe", "qwen2", "gpt-2"} {
		t.Run(name, func(t *testing.T) {
			path := reftest.Vocab(t, l, name)
			cases, err := ref.ReadVocabCases(path)
			require.NoError(t, err)
			require.NotEmpty(t, cases)
			m, err := l.LoadVocab(path)
			require.NoError(t, err)
			defer m.Close()
			pass := 0
			for _, c := range cases {
				got, err := m.Tokenize(c.Text, false, false)
				require.NoError(t, err)
				if assert.Equal(t, c.IDs, nonNil(got), "text %q", c.Text) {
					pass++
				}
			}
			t.Logf("%s: %d/%d vectors", name, pass, len(cases))
		})
	}
}

func nonNil(x []int32) []int32 {
	if x == nil {
		return []int32{}
	}
	return x
}

func TestPieceAndDetokenize(t *testing.T) {
	l := reftest.Lib(t)
	m, err := l.LoadVocab(reftest.Vocab(t, l, "llama-spm"))
	require.NoError(t, err)
	defer m.Close()
	ids, err := m.Tokenize("Hello world", true, false)
	require.NoError(t, err)
	require.Equal(t, m.BOS(), ids[0])
	text, err := m.Detokenize(ids, true, false)
	require.NoError(t, err)
	assert.Equal(t, "Hello world", strings.TrimPrefix(text, " ")) // SentencePiece's space prefix
	p, err := m.Piece(ids[1], false)
	require.NoError(t, err)
	assert.Equal(t, " Hello", string(p))
	_, err = m.Piece(int32(m.NVocab()), false)
	assert.ErrorIs(t, err, ref.ErrBadToken)
	_, err = m.Detokenize([]int32{-1}, false, false)
	assert.ErrorIs(t, err, ref.ErrBadToken)
}

// Per-position logits agree with greedy decoding, and the batch size does
// not change them beyond float rounding.
func TestLogitsMatchGreedy(t *testing.T) {
	l := reftest.Lib(t)
	m := reftest.Model(t, l, reftest.SharedModel(t, storiesModel))
	c := reftest.Context(t, m, ref.ContextConfig{NCtx: 128})
	prompt, err := m.Tokenize(storiesPrompt, true, false)
	require.NoError(t, err)
	gen, err := c.Greedy(prompt, 20, true)
	require.NoError(t, err)
	seq := append(append([]int32(nil), prompt...), gen...)
	logits, err := c.Logits(seq)
	require.NoError(t, err)
	require.Len(t, logits, len(seq))
	for i := len(prompt) - 1; i < len(seq)-1; i++ {
		require.Len(t, logits[i], m.NVocab())
		assert.Equal(t, seq[i+1], argmax(logits[i]), "position %d", i)
	}

	small := reftest.Context(t, m, ref.ContextConfig{NCtx: 128, NBatch: 7})
	chunked, err := small.Logits(seq)
	require.NoError(t, err)
	for i := range seq {
		assert.InDeltaSlice(t, toF64(logits[i]), toF64(chunked[i]), 1e-3, "position %d", i)
	}

	_, err = c.Logits(make([]int32, 129))
	assert.ErrorIs(t, err, ref.ErrTooLong)
	_, err = c.Logits([]int32{int32(m.NVocab())})
	assert.ErrorIs(t, err, ref.ErrBadToken)
}

func TestBench(t *testing.T) {
	l := reftest.Lib(t)
	m := reftest.Model(t, l, reftest.SharedModel(t, storiesModel))
	c := reftest.Context(t, m, ref.ContextConfig{NCtx: 128})
	tm, err := c.Bench(64, 16)
	require.NoError(t, err)
	assert.Equal(t, 1, tm.Threads)
	assert.Positive(t, tm.PrefillTokPerSec())
	assert.Positive(t, tm.DecodeTokPerSec())
	t.Logf("stories260K, 1 thread: prefill %.0f tok/s, decode %.0f tok/s", tm.PrefillTokPerSec(), tm.DecodeTokPerSec())

	// Two sleeping threads give the same logits as one.
	prompt, err := m.Tokenize(storiesPrompt, true, false)
	require.NoError(t, err)
	want, err := c.Logits(prompt)
	require.NoError(t, err)
	c2 := reftest.Context(t, m, ref.ContextConfig{NCtx: 128, Threads: 2, SleepIdle: true})
	got, err := c2.Logits(prompt)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	tm, err = c2.Bench(64, 16)
	require.NoError(t, err)
	assert.Equal(t, 2, tm.Threads)
	assert.Positive(t, tm.DecodeTokPerSec())
}

func TestErrors(t *testing.T) {
	l := reftest.Lib(t)
	assert.ErrorIs(t, l.Quantize("x.gguf", "y.gguf", "Q3_XL"), ref.ErrUnknownFileType)
	_, err := l.LoadModel("does-not-exist.gguf")
	assert.Error(t, err)
	_, err = l.ReadGGUF("ref_test.go")
	assert.Error(t, err)
	_, err = ref.Open(t.TempDir())
	assert.ErrorIs(t, err, ref.ErrOtherDir)
}

func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

func toF64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}
