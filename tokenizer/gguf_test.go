package tokenizer

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeVocab writes a GGUF holding only the metadata kv and returns its path.
func writeVocab(t *testing.T, kv []gguf.KV) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vocab.gguf")
	require.NoError(t, gguf.WriteFile(path, kv, nil))
	return path
}

func TestOpenSynthetic(t *testing.T) {
	toks := []string{"<unk>", "<s>", "</s>", "▁a", "<|im_end|>"}
	path := writeVocab(t, []gguf.KV{
		{Key: keyModel, Value: "llama"},
		{Key: keyTokens, Value: toks},
		{Key: keyScores, Value: []float32{0, 0, 0, -1, 0}},
		{Key: keyTypes, Value: []int32{2, 3, 3, 1, 3}},
		{Key: keyBOS, Value: uint32(1)},
		{Key: keyEOS, Value: uint32(2)},
		{Key: keyEOT, Value: uint32(4)},
		{Key: keyAddBOS, Value: false},
		{Key: keyChatTemplate, Value: "{{ messages[0].content }}"},
	})
	tok, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, 5, tok.Size())
	assert.Equal(t, int32(4), tok.EOT())
	assert.False(t, tok.AddBOS())
	assert.Equal(t, []int32{2, 4}, tok.EOG())
	assert.Equal(t, []int32{0, 1, 2, 4}, tok.Control(), "unknown and control tokens, not the normal ▁a")
	for id, want := range []bool{true, true, true, false, true} {
		assert.Equal(t, want, tok.IsControl(int32(id)), id)
		assert.False(t, tok.IsByte(int32(id)), id)
	}
	assert.False(t, tok.IsControl(-1))
	assert.False(t, tok.IsControl(5))
	assert.Equal(t, []int32{3}, tok.Encode("a", EncodeOptions{AddSpecial: true}))
	out, used, cause := tok.ApplyChat([]Message{{Role: "user", Content: "hi"}}, ChatOptions{AddGenerationPrompt: true})
	require.NoError(t, cause)
	assert.Equal(t, FormatJinja, used)
	assert.Equal(t, "hi", out)
}

// TestOpenIntScores: llama.cpp accepts integer scores.
func TestOpenIntScores(t *testing.T) {
	path := writeVocab(t, []gguf.KV{
		{Key: keyModel, Value: "llama"},
		{Key: keyTokens, Value: []string{"<unk>", "▁", "a", "▁a"}},
		{Key: keyScores, Value: []int32{0, -1, -2, 5}},
	})
	tok, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, []int32{3}, tok.Encode("a", EncodeOptions{}))
}

func TestOpenErrors(t *testing.T) {
	cases := []struct {
		name string
		kv   []gguf.KV
		err  error
	}{
		{"no model", []gguf.KV{{Key: keyTokens, Value: []string{"a"}}}, gguf.ErrKeyNotFound},
		{"no tokens", []gguf.KV{{Key: keyModel, Value: "llama"}}, gguf.ErrKeyNotFound},
		{"tokens not strings", []gguf.KV{{Key: keyModel, Value: "llama"}, {Key: keyTokens, Value: []int32{1}}}, gguf.ErrTypeMismatch},
		{"bos not integer", []gguf.KV{{Key: keyModel, Value: "llama"}, {Key: keyTokens, Value: []string{"a"}}, {Key: keyBOS, Value: "1"}}, gguf.ErrTypeMismatch},
		{"unknown model", []gguf.KV{{Key: keyModel, Value: "rwkv"}, {Key: keyTokens, Value: []string{"a"}}}, ErrUnsupported},
		{"unknown pre", []gguf.KV{{Key: keyModel, Value: "gpt2"}, {Key: keyPre, Value: "falcon"}, {Key: keyTokens, Value: []string{"a"}}, {Key: keyMerges, Value: []string{"a a"}}}, ErrUnsupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(writeVocab(t, c.kv))
			require.ErrorIs(t, err, c.err)
		})
	}
	_, err := Open(filepath.Join(t.TempDir(), "missing.gguf"))
	require.Error(t, err)
}

// TestFixtureVocab uses the llama-spm vocabulary committed under
// fixture/testdata, so some real-vocabulary checks run without the
// llama.cpp reference.
func TestFixtureVocab(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	tok, err := Open(filepath.Join(filepath.Dir(file), "..", "internal", "fixture", "testdata", "ggml-vocab-llama-spm.gguf"))
	require.NoError(t, err)
	// Ids from llama.cpp's ggml-vocab-llama-spm.gguf.out.
	assert.Equal(t, []int32{15043, 3186}, tok.Encode("Hello world", EncodeOptions{}))
	assert.Equal(t, []int32{1, 29871, 15043, 3186}, tok.Encode(" Hello world", EncodeOptions{AddSpecial: true}))
	assert.Equal(t, []int32{2}, tok.EOG())
	assert.Equal(t, " Hello", string(tok.Piece(15043)))
}
