package ref_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// The figures below are stated in ../shared/models/README.md.
const (
	storiesModel  = "stories260K.gguf"
	storiesPrompt = "Once upon a time"
	storiesText   = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high."
)

func TestQuantizeStoriesQ4KM(t *testing.T) {
	l := reftest.Lib(t)
	in := reftest.SharedModel(t, storiesModel)
	out := filepath.Join(t.TempDir(), "stories260K-Q4_K_M.gguf")
	require.NoError(t, l.Quantize(in, out, "Q4_K_M"))

	f, err := l.ReadGGUF(out)
	require.NoError(t, err)
	assert.Equal(t, "llama", f.Architecture)
	assert.Equal(t, map[string]int{"q5_0": 29, "q8_0": 3, "f16": 5, "f32": 11}, f.Histogram(l))
}

func TestGreedyStories(t *testing.T) {
	l := reftest.Lib(t)
	for _, ftype := range []string{"F32", "Q4_K_M"} {
		t.Run(ftype, func(t *testing.T) {
			path := reftest.SharedModel(t, storiesModel)
			if ftype != "F32" {
				q := filepath.Join(t.TempDir(), "q.gguf")
				require.NoError(t, l.Quantize(path, q, ftype))
				path = q
			}
			m := reftest.Model(t, l, path)
			c := reftest.Context(t, m, ref.ContextConfig{})
			prompt, err := m.Tokenize(storiesPrompt, true, false)
			require.NoError(t, err)
			out, err := c.Greedy(prompt, 60, true)
			require.NoError(t, err)
			require.Len(t, out, 60)
			text, err := m.Detokenize(append(prompt, out...), true, false)
			require.NoError(t, err)
			// The README quotes the text up to the end of its last sentence.
			text = strings.TrimPrefix(text, " ")
			assert.True(t, strings.HasPrefix(text, storiesText), "greedy text: %q", text)
		})
	}
}
