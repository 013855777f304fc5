package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/fixture"
	"github.com/realizar-host/realizar-host/gguf"
)

// hostileTemplates are issue 19's chat templates: in-process, each panics,
// is a Go fatal error or runs for minutes.
var hostileTemplates = []struct{ name, template string }{
	{"division by zero", "{{ 1 % 0 }}"},
	{"huge repetition", "{{ 'a' * 1000000000 }}"},
	{"recursive macro", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"},
	{"huge range", "{% for i in range(100000000) %}{% endfor %}"},
}

// templateModel writes the one-layer llama fixture with tokenizer.chat_template set.
func templateModel(t *testing.T, template string) string {
	t.Helper()
	c := fixture.Tiny()
	c.Embd, c.FF, c.Layers, c.Heads, c.HeadsKV, c.Context = 64, 128, 1, 2, 1, 256
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	vocab.KV = append(vocab.KV, gguf.KV{Key: gguf.KeyChatTemplate, Value: template})
	path := filepath.Join(t.TempDir(), "tmpl.gguf")
	require.NoError(t, fixture.GenerateFile(path, c, vocab))
	return path
}

// TestHostileTemplateCLI: run --chat and serve with each hostile template
// exit with the bad-file status and a clear message within a bounded time
// (model load and the sandbox's start included); a normal template runs.
func TestHostileTemplateCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the sandbox's compilation cache
	path := templateModel(t, "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>")
	_, stderr, code := runIn(t, "", "run", "-m", path, "--chat", "-p", "hi", "-n", "1", "--sampler", "greedy")
	require.Equal(t, exitOK, code, stderr)
	for _, h := range hostileTemplates {
		t.Run(h.name, func(t *testing.T) {
			path := templateModel(t, h.template)
			start := time.Now()
			_, stderr, code := runIn(t, "", "run", "-m", path, "--chat", "-p", "hi", "-n", "1")
			elapsed := time.Since(start)
			assert.Equal(t, exitBadFile, code, stderr)
			assert.Contains(t, stderr, "exceeded its limits")
			assert.NotContains(t, stderr, "goroutine ")
			assert.Less(t, elapsed, 20*time.Second)
			assert.Less(t, strings.Count(stderr, "\n"), 4, stderr)
			t.Logf("%v: %s", elapsed.Round(time.Millisecond), strings.TrimSpace(stderr))

			// serve probes the template at load and refuses the file.
			start = time.Now()
			_, stderr, code = runIn(t, "", "serve", "--addr", "127.0.0.1:0", "-m", path)
			assert.Equal(t, exitBadFile, code, stderr)
			assert.Contains(t, stderr, "exceeded its limits")
			assert.Less(t, time.Since(start), 20*time.Second)
		})
	}
}
