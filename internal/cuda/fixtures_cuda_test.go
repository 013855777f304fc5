//go:build cuda

package cuda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/fixture"
)

// platformFixtures on a GPU: the tiny llama and qwen2 presets, then one
// preset of each other architecture (and RoPE) the GPU forward computes:
// tiny-yarn, qwen3-tiny, qwen3moe-tiny, phi3-tiny and gemma3-tiny, generated beside the
// tiny fixture when missing.
func platformFixtures(t *testing.T) []string {
	t.Helper()
	tiny, err := tinyPath()
	require.NoError(t, err)
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	paths := []string{tiny}
	for _, c := range []fixture.Config{fixture.Qwen2Tiny(), fixture.TinyYaRN(), fixture.Qwen3Tiny(), fixture.Qwen3MoETiny(), fixture.Phi3Tiny(), fixture.Gemma3Tiny()} {
		p := filepath.Join(filepath.Dir(tiny), strings.TrimPrefix(c.Name, "fixture-")+".gguf")
		if _, err := os.Stat(p); err != nil {
			require.NoError(t, fixture.GenerateFile(p, c, vocab))
		}
		paths = append(paths, p)
	}
	return paths
}
