package gguf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedModel returns the path of a model in ../shared/models relative to
// the repository root, skipping when the folder is absent outside CI.
func sharedModel(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "models")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared models folder %s is missing (CI=true): %v", dir, err)
		}
		t.Skipf("shared models folder %s is absent; put stories260K.gguf there to run this test", dir)
	}
	return filepath.Join(dir, name)
}

// vocabDir returns llama.cpp's vocab folder: $LLAMAREF_DIR/vocab, else
// <repo>/.cache/llamaref/vocab; it skips when neither exists outside CI.
func vocabDir(t *testing.T) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("LLAMAREF_DIR"); d != "" {
		dirs = append(dirs, filepath.Join(d, "vocab"))
	}
	dirs = append(dirs, filepath.Join("..", ".cache", "llamaref", "vocab"))
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("llama.cpp vocab folder missing (looked in %v; run tools/llamaref/install.sh)", dirs)
	}
	t.Skipf("llama.cpp vocab folder absent (looked in %v); set LLAMAREF_DIR or run tools/llamaref/install.sh", dirs)
	return ""
}

func TestStories260K(t *testing.T) {
	f, err := Open(sharedModel(t, "stories260K.gguf"))
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
	dir := vocabDir(t)
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
