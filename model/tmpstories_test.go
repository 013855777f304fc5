package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTmpStories(t *testing.T) {
	f, err := tmpOpen("/work/shared/models/stories260K.gguf")
	require.NoError(t, err)
	m, err := load(f, Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	t.Logf("%+v", m.Config())
	toks := f.meta["tokenizer.ggml.tokens"].([]any)
	id := map[string]int32{}
	for i, s := range toks {
		id[s.(string)] = int32(i)
	}
	prompt := []int32{1}
	for _, w := range []string{"▁Once", "▁upon", "▁a", "▁time"} {
		v, ok := id[w]
		t.Log(w, v, ok)
		prompt = append(prompt, v)
	}
	s := m.NewStep()
	var logits []float32
	for i, tk := range prompt {
		logits, err = s.Step(tk, i)
		require.NoError(t, err)
	}
	var out strings.Builder
	pos := len(prompt)
	for range 60 {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		out.WriteString(strings.ReplaceAll(toks[best].(string), "▁", " "))
		logits, err = s.Step(int32(best), pos)
		require.NoError(t, err)
		pos++
	}
	t.Log(out.String())
}

func TestTmpPrefill(t *testing.T) {
	f, err := tmpOpen("/work/shared/models/stories260K.gguf")
	require.NoError(t, err)
	m, err := load(f, Options{Threads: 2, BatchSize: 7})
	require.NoError(t, err)
	defer m.Close()
	toks := []int32{1, 403, 407, 261, 378, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160, 170}
	s := m.NewStep()
	var step []float32
	for i, tk := range toks {
		step, err = s.Step(tk, i)
		require.NoError(t, err)
	}
	step = append([]float32(nil), step...)
	p := m.NewStep()
	_, err = p.Prefill(toks[:3], 0)
	require.NoError(t, err)
	pre, err := p.Prefill(toks, 3)
	require.NoError(t, err)
	require.Equal(t, step, pre)
}
