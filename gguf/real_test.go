package gguf

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

func TestStories260K(t *testing.T) {
	f, err := Open(testenv.Stories())
	require.NoError(t, err)
	defer f.Close()

	assert.Equal(t, uint32(3), f.Version)
	arch, err := f.String("general.architecture")
	require.NoError(t, err)
	assert.Equal(t, "llama", arch)
	for key, want := range map[string]uint32{
		"llama.embedding_length":        64,
		"llama.feed_forward_length":     172,
		"llama.block_count":             5,
		"llama.attention.head_count":    8,
		"llama.attention.head_count_kv": 4,
	} {
		got, err := f.Uint32(key)
		require.NoError(t, err, key)
		assert.Equal(t, want, got, key)
	}
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	require.NoError(t, err)
	assert.Len(t, tokens, 512)
	scores, err := f.Float32s("tokenizer.ggml.scores")
	require.NoError(t, err)
	assert.Len(t, scores, 512)

	require.Len(t, f.Tensors, 48)
	var total int64
	for _, ti := range f.Tensors {
		assert.Equal(t, TypeF32, ti.Type, ti.Name)
		assert.Equal(t, ti.Elements()*4, ti.Size, ti.Name)
		b, err := f.TensorData(ti.Name)
		require.NoError(t, err)
		assert.Len(t, b, int(ti.Size))
		total += ti.Size
	}
	emb, ok := f.Tensor("token_embd.weight")
	require.True(t, ok)
	assert.Equal(t, []int64{64, 512}, emb.Dims)
	down, ok := f.Tensor("blk.0.ffn_down.weight")
	require.True(t, ok)
	assert.Equal(t, []int64{172, 64}, down.Dims)
	assert.LessOrEqual(t, total, f.Size()-f.DataOffset(0))
}

func TestVocabFiles(t *testing.T) {
	dir := testenv.VocabDir(t)
	paths, err := filepath.Glob(filepath.Join(dir, "*.gguf"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := Open(p)
			require.NoError(t, err)
			defer f.Close()
			model, err := f.String("tokenizer.ggml.model")
			require.NoError(t, err)
			assert.NotEmpty(t, model)
			tokens, err := f.Strings("tokenizer.ggml.tokens")
			require.NoError(t, err)
			assert.NotEmpty(t, tokens)
		})
	}
	f, err := Open(filepath.Join(dir, "ggml-vocab-llama-spm.gguf"))
	require.NoError(t, err)
	defer f.Close()
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	require.NoError(t, err)
	assert.Len(t, tokens, 32000)
	model, err := f.String("tokenizer.ggml.model")
	require.NoError(t, err)
	assert.Equal(t, "llama", model)
}
