package model

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/fixture"
)

// Weights exposes every tensor with its recorded type and shape.
func TestWeightsExport(t *testing.T) {
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	cfg := fixture.Qwen2Tiny()
	path := filepath.Join(t.TempDir(), "q.gguf")
	require.NoError(t, fixture.GenerateFile(path, cfg, vocab))
	m := open(t, path, Options{Threads: 1})
	c := m.Config()
	w := m.Weights()
	require.Len(t, w.Layers, c.Layers)
	assert.Equal(t, "token_embd.weight", w.Embd.Name)
	assert.Equal(t, c.Vocab, w.Embd.Rows)
	assert.Equal(t, c.Embd, w.Embd.Cols)
	l := w.Layers[0]
	assert.Equal(t, "blk.0.attn_q.weight", l.Q.Name)
	assert.Equal(t, c.QDim(), l.Q.Rows)
	assert.Len(t, l.Q.Bias, c.QDim(), "qwen2 has q bias")
	assert.Nil(t, l.O.Bias)
	assert.Equal(t, c.FFN, l.Down.Cols)
	rs, err := l.Down.Type.RowSize(l.Down.Cols)
	require.NoError(t, err)
	assert.Len(t, l.Down.Data, l.Down.Rows*rs)
	assert.Len(t, w.OutNorm, c.Embd)
	assert.Greater(t, m.RopeAngles(false).ThetaScale, float32(0))
}
