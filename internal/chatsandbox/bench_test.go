package chatsandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/internal/chatsandbox"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// BenchmarkRender: one render of the published Llama 3 template over a
// four-message conversation, parse included, in-process
// (tokenizer.RenderJinja: jinja's step budget, no deadline) and in the sandbox (a fresh instance per render: the Go
// runtime's start plus the rendering).
func BenchmarkRender(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("..", "..", "tokenizer", "testdata", "chat", "llama3.jinja"))
	require.NoError(b, err)
	opts := tokenizer.ChatOptions{AddGenerationPrompt: true, BOS: "<|begin_of_text|>"}
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			_, err := tokenizer.RenderJinja(string(src), chatMsgs, opts)
			require.NoError(b, err)
		}
	})
	b.Run("sandbox", func(b *testing.B) {
		r := renderer(b)
		for b.Loop() {
			_, err := r.Render(context.Background(), string(src), chatMsgs, opts)
			require.NoError(b, err)
		}
	})
}

// BenchmarkNew: compiling the guest (New with an empty cache), what a
// process pays once; and loading it from a compilation cache directory
// that already holds it (a later process).
func BenchmarkNew(b *testing.B) {
	b.Run("compile", func(b *testing.B) {
		for b.Loop() {
			r, err := chatsandbox.New(context.Background(), chatsandbox.Config{})
			require.NoError(b, err)
			require.NoError(b, r.Close(context.Background()))
		}
	})
	b.Run("from cache dir", func(b *testing.B) {
		dir := b.TempDir()
		warm, err := wazero.NewCompilationCacheWithDir(dir)
		require.NoError(b, err)
		r, err := chatsandbox.New(context.Background(), chatsandbox.Config{Cache: warm})
		require.NoError(b, err)
		require.NoError(b, r.Close(context.Background()))
		for b.Loop() {
			cache, err := wazero.NewCompilationCacheWithDir(dir)
			require.NoError(b, err)
			r, err := chatsandbox.New(context.Background(), chatsandbox.Config{Cache: cache})
			require.NoError(b, err)
			require.NoError(b, r.Close(context.Background()))
			require.NoError(b, cache.Close(context.Background()))
		}
	})
}
