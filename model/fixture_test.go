package model

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/fixture"
)

// The project's fixture generator's tiny presets load and run: logits are
// finite, deterministic, and agree with the naive float64 forward. The
// qwen2, qwen3, qwen3moe and phi3 presets are written with the llama vocabulary (gemma3's own) (the model does not
// read the tokenizer) to keep the file small.
func TestFixturePresets(t *testing.T) {
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	for _, cfg := range []fixture.Config{fixture.Tiny(), fixture.Qwen2Tiny(), fixture.Qwen3Tiny(), fixture.Qwen3MoETiny(), fixture.Phi3Tiny(), fixture.Gemma3Tiny()} {
		t.Run(cfg.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), cfg.Name+".gguf")
			require.NoError(t, fixture.GenerateFile(path, cfg, vocab))
			m := open(t, path, Options{Threads: 2})
			c := m.Config()
			assert.Equal(t, cfg.Arch, c.Arch)
			assert.Equal(t, cfg.TiedOutput, m.TiedOutput())

			toks := []int32{1, 450, 4996, 17354, 1701}
			got := stepAll(t, m.NewSequence(), toks)
			again := stepAll(t, m.NewSequence(), toks)
			assert.Equal(t, got, again, "deterministic")
			want := naiveLogits(t, path, toks)
			for i := range toks {
				for _, x := range got[i] {
					require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0), "position %d", i)
				}
				assert.GreaterOrEqual(t, cosine(got[i], want[i]), 0.99999, "position %d", i)
			}
		})
	}
}
