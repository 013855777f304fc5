package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/arch"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/gguftest"
)

// TestInspectRegistered: inspect reports every registered architecture's
// smallest preset (over a 256-token vocabulary) with its architecture,
// shape and the rows its registration adds: the sliding layers of an
// arch.SlidingLayers architecture.
func TestInspectRegistered(t *testing.T) {
	vocab := gguftest.Vocab(t, 256)
	for _, name := range arch.Names() {
		t.Run(name, func(t *testing.T) {
			a, _ := arch.Lookup(name)
			c := slices.MinFunc(a.Presets, func(x, y arch.Fixture) int {
				return x.Embd*x.FF*x.Layers - y.Embd*y.FF*y.Layers
			})
			path := filepath.Join(t.TempDir(), name+".gguf")
			require.NoError(t, fixture.GenerateFile(path, c, vocab))
			rep, err := inspect(path)
			require.NoError(t, err)
			assert.Equal(t, name, rep.Architecture)
			hp := rep.Hyperparameters
			require.NotNil(t, hp.BlockCount)
			require.NotNil(t, hp.EmbeddingLength)
			assert.Equal(t, []uint32{uint32(c.Layers), uint32(c.Embd)}, []uint32{*hp.BlockCount, *hp.EmbeddingLength})
			var text strings.Builder
			require.NoError(t, rep.writeText(&text))
			assert.Contains(t, text.String(), name)
			if a.Sliding == arch.SlidingLayers && c.SlidingWindow > 0 {
				assert.Contains(t, text.String(), "sliding layers")
			} else {
				assert.NotContains(t, text.String(), "sliding layers")
			}
		})
	}
}
