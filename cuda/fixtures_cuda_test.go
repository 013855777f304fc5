//go:build cuda

package cuda

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/fixture"
)

// platformFixtures on a GPU: the tiny llama and qwen2 presets.
func platformFixtures(t *testing.T) []string {
	t.Helper()
	tiny, err := tinyPath()
	require.NoError(t, err)
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	qwen := filepath.Join(filepath.Dir(tiny), "qwen2-tiny.gguf")
	if _, err := os.Stat(qwen); err != nil {
		require.NoError(t, fixture.GenerateFile(qwen, fixture.Qwen2Tiny(), vocab))
	}
	return []string{tiny, qwen}
}
