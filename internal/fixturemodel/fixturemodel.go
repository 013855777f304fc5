// Package fixturemodel is the small random-weight model the serving and
// server tests run: a llama of one layer of width 64 over the 32,000-token
// llama vocabulary (≈ 17 MB) with a context of 256 positions, a few
// milliseconds per token, generated once per test binary.
package fixturemodel

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// Config is the model's shape, named name (its general.name).
func Config(name string) fixture.Config {
	c := fixture.Tiny()
	c.Name = name
	c.Embd, c.FF, c.Layers, c.Heads, c.HeadsKV, c.Context = 64, 128, 1, 2, 1, 256
	return c
}

// Generate writes the model named name to path.
func Generate(path, name string) error {
	vocab, err := fixture.LlamaVocab()
	if err != nil {
		return err
	}
	return fixture.GenerateFile(path, Config(name), vocab)
}

// Loaded is the model opened for a test: its tokenizer, its weights (one
// thread) and a maker of forwards over them, each with a KV cache of its
// own.
type Loaded struct {
	Tokenizer  *tokenizer.Tokenizer
	Model      *model.Model
	NewForward func() (forward.ArchForward, error)
}

// Open loads the model at path for t; it is closed when t ends.
func Open(t testing.TB, path string) Loaded {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	tok, err := tokenizer.FromGGUF(f)
	require.NoError(t, err)
	mdl, err := model.Load(f, model.Options{Threads: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = mdl.Close(); _ = f.Close() })
	return Loaded{Tokenizer: tok, Model: mdl, NewForward: func() (forward.ArchForward, error) {
		return forward.NewSequenceForward(mdl.NewSequence(), forward.Options{Arch: mdl.Config().Arch,
			ModelContext: mdl.Config().ContextLength})
	}}
}
