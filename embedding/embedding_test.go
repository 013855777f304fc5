package embedding

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/model"
)

func TestParsePooling(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Pooling
		ok   bool
	}{
		{"none", PoolingNone, true}, {"mean", PoolingMean, true}, {"cls", PoolingCLS, true},
		{"last", PoolingLast, true}, {"rank", PoolingRank, true},
		{"", 0, false}, {"MEAN", 0, false}, {"max", 0, false},
	} {
		got, err := ParsePooling(tc.in)
		if !tc.ok {
			assert.ErrorIs(t, err, ErrPooling, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, tc.in, got.String())
	}
	assert.Equal(t, "pooling(9)", Pooling(9).String())
}

func TestPool(t *testing.T) {
	// Three tokens of two dimensions.
	hidden := []float32{1, -2, 3, 4, 8, 1}
	for _, tc := range []struct {
		p    Pooling
		want []float32
	}{
		{PoolingMean, []float32{4, 1}},
		{PoolingCLS, []float32{1, -2}},
		{PoolingLast, []float32{8, 1}},
	} {
		got, err := Pool(nil, hidden, 3, 2, tc.p)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.p.String())
	}
	for _, p := range []Pooling{PoolingNone, PoolingRank, 7} {
		_, err := Pool(nil, hidden, 3, 2, p)
		assert.ErrorIs(t, err, ErrPooling, p.String())
	}
	_, err := Pool(nil, hidden, 2, 2, PoolingMean)
	assert.Error(t, err, "rows that do not match n")
	_, err = Pool(nil, nil, 0, 2, PoolingMean)
	assert.Error(t, err, "no tokens")
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		in, want []float32
	}{
		{[]float32{3, 4}, []float32{0.6, 0.8}},
		{[]float32{0, 0, 0}, []float32{0, 0, 0}},
		{[]float32{-2}, []float32{-1}},
	} {
		v := append([]float32(nil), tc.in...)
		Normalize(v)
		assert.InDeltaSlice(t, tc.want, v, 1e-7, "%v", tc.in)
	}
	// As llama.cpp's: each square is a float32 product, so values whose
	// squares underflow make a zero sum and a zero vector.
	v := []float32{1e-30, 2e-30, -7e-31}
	Normalize(v)
	assert.Equal(t, []float32{0, 0, 0}, v)
}

// writeWithPooling writes a GGUF holding only general.architecture and,
// when value is not nil, llama.pooling_type.
func writeWithPooling(t *testing.T, value any) *gguf.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := gguf.NewWriter(f)
	require.NoError(t, w.AddKV("general.architecture", "llama"))
	if value != nil {
		require.NoError(t, w.AddKV("llama.pooling_type", value))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	g, err := gguf.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

func TestPoolingOf(t *testing.T) {
	p, declared, err := PoolingOf(writeWithPooling(t, nil))
	require.NoError(t, err)
	assert.Equal(t, PoolingNone, p, "absent is llama.cpp's default, none")
	assert.False(t, declared)
	for _, v := range []uint32{1, 2, 3} {
		p, declared, err := PoolingOf(writeWithPooling(t, v))
		require.NoError(t, err)
		assert.True(t, declared)
		assert.Equal(t, Pooling(v), p)
	}
	_, _, err = PoolingOf(writeWithPooling(t, uint32(9)))
	assert.ErrorIs(t, err, ErrPooling)
	_, _, err = PoolingOf(writeWithPooling(t, "mean"))
	assert.ErrorIs(t, err, gguf.ErrTypeMismatch)
}

// TestEmbed checks the Embedder on the committed stories260K model: unit
// length, the pooling types' relations to model.Sequence.Hidden, equal vectors
// for equal inputs however the calls interleave, and its errors.
// (tools/llamaref/parity's TestEmbeddings compares it with llama.cpp.)
func TestEmbed(t *testing.T) {
	f, err := gguf.Open(testenv.Stories())
	require.NoError(t, err)
	defer f.Close()
	m, err := model.Load(f, model.Options{Threads: 1, ContextSize: 64})
	require.NoError(t, err)
	defer m.Close()
	toks := []int32{1, 403, 407, 261, 378, 434, 351}

	_, err = New(m, PoolingNone)
	assert.ErrorIs(t, err, ErrPooling)
	_, err = New(m, PoolingRank)
	assert.ErrorIs(t, err, ErrPooling)

	hidden, err := m.NewSequence().Hidden(nil, toks)
	require.NoError(t, err)
	dims := m.Config().Embd
	require.Len(t, hidden, len(toks)*dims)
	for _, p := range []Pooling{PoolingMean, PoolingCLS, PoolingLast} {
		e, err := New(m, p)
		require.NoError(t, err)
		assert.Equal(t, dims, e.Dims())
		assert.Equal(t, p, e.Pooling())
		got, err := e.Embed(toks)
		require.NoError(t, err)
		want, err := Pool(nil, hidden, len(toks), dims, p)
		require.NoError(t, err)
		Normalize(want)
		assert.Equal(t, want, got, p.String())
		// A shorter input in between leaves the next call's result alone.
		_, err = e.Embed(toks[:2])
		require.NoError(t, err)
		again, err := e.Embed(toks)
		require.NoError(t, err)
		assert.Equal(t, got, again, p.String())

		_, err = e.Embed(nil)
		assert.ErrorIs(t, err, model.ErrPosition)
		_, err = e.Embed([]int32{1, int32(m.Config().Vocab)})
		assert.ErrorIs(t, err, forward.ErrBadToken)
		_, err = e.Embed(make([]int32, e.ContextLength()+1))
		assert.ErrorIs(t, err, forward.ErrContextExceeded)
	}
	cls, _ := New(m, PoolingCLS)
	a, err := cls.Embed(toks[:1])
	require.NoError(t, err)
	b, err := cls.Embed(toks)
	require.NoError(t, err)
	// Equal up to the sums' order (one token takes the one-token order, a
	// prompt pass the batch orders).
	assert.InDeltaSlice(t, a, b, 1e-5, "causal attention: the first token's state does not see the rest")
}
