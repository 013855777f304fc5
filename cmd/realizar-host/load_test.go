package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
)

// TestLoadBar: the load bar counts tensors, ends at 100% with every
// tensor counted, stays on screen (ends its line) and shows no byte rate.
func TestLoadBar(t *testing.T) {
	f, err := gguf.Open(writeModel(t))
	require.NoError(t, err)
	defer f.Close()
	var out bytes.Buffer
	require.NoError(t, touchTensors(f, newLoadBar(&out, len(f.Tensors))))
	text := out.String()
	n := len(f.Tensors)
	assert.Contains(t, text, "loading tensors")
	assert.Contains(t, text, "100%")
	assert.Contains(t, text, fmt.Sprintf("(%d/%d", n, n))
	assert.True(t, strings.HasSuffix(text, "\n"), "%q", text)
	assert.NotContains(t, text, "B/s")
	assert.NoError(t, touchTensors(f, nil), "no bar")
}

// TestModelIsDirectory: a directory is named as one, exit status 3.
func TestModelIsDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := openGGUF(dir)
	var ce *cmdError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, exitBadFile, ce.code)
	assert.EqualError(t, err, dir+" is a directory, not a GGUF file")
	_, err = inspect(dir)
	assert.ErrorContains(t, err, "is a directory")
}

func TestBackendName(t *testing.T) {
	assert.Equal(t, "cpu-avx2", backendName([]string{"Backend: cpu-avx2", "Fallback: cuda → cpu: out of memory"}))
	assert.Equal(t, "unknown", backendName(nil))
}

// TestOpenVocabFindsRepository: the qwen2 vocab is found under the
// repository's .cache/llamaref from a folder below it; absent, the message
// says where it looked.
func TestOpenVocabFindsRepository(t *testing.T) {
	t.Setenv("LLAMAREF_DIR", "")
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+repoModule+"\n\ngo 1.26\n"), 0o644))
	sub := filepath.Join(root, "cmd", "x")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	t.Chdir(sub)

	_, err := openVocab("qwen2", "")
	require.Error(t, err)
	assert.ErrorContains(t, err, "pass --vocab")
	assert.ErrorContains(t, err, filepath.Join(root, ".cache", "llamaref", "vocab", fixture.VocabFile("qwen2")))

	vocabDir := filepath.Join(root, ".cache", "llamaref", "vocab")
	require.NoError(t, os.MkdirAll(vocabDir, 0o755))
	require.NoError(t, gguf.WriteFile(filepath.Join(vocabDir, fixture.VocabFile("qwen2")),
		[]gguf.KV{{Key: gguf.KeyTokenizerModel, Value: "gpt2"}, {Key: gguf.KeyTokens, Value: []string{"a", "b"}}}, nil))
	f, err := openVocab("qwen2", "")
	require.NoError(t, err)
	assert.NoError(t, f.Close())

	// A go.mod of another module (tools/llamaref's) is not the repository.
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "go.mod"), []byte("module "+repoModule+"/tools/llamaref\n"), 0o644))
	t.Chdir(other)
	_, err = openVocab("qwen2", "")
	assert.ErrorContains(t, err, "pass --vocab", "no vocab under another module")

	// phi3 looks for llama.cpp's phi-3 vocabulary.
	t.Chdir(sub)
	_, err = openVocab("phi3", "")
	assert.ErrorContains(t, err, filepath.Join(vocabDir, "ggml-vocab-phi-3.gguf"))
}
