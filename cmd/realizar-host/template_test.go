package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
)

// hostileTemplates would exhaust an unbounded renderer (issue 19's, which
// panicked gonja or killed the process, and one that runs to the
// sandbox's deadline).
var hostileTemplates = []struct{ name, template string }{
	{"huge repetition", "{{ 'a' * 1000000000 }}"},
	{"recursive macro", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"},
	{"endless work", "{% for i in range(100000) %}{{ ('ab' * 500000)|length }}{% endfor %}"},
}

// failingTemplates fail as Jinja2 fails them: run --chat exits 1 with the
// template's line and message, never another format.
var failingTemplates = []struct{ name, template, says string }{
	{"division by zero", "x\n{{ 1 % 0 }}", "line 2: ZeroDivisionError"},
	{"huge range", "{% for i in range(100000000) %}{% endfor %}", "line 1: OverflowError: Range too big"},
	{"raise_exception", "{% for m in messages %}\n{{ raise_exception('Conversation roles must alternate') }}{% endfor %}", "line 2: Conversation roles must alternate"},
	{"syntax error", "{% for m in messages %}{{ m.content }}", "line 1: unexpected end of template"},
}

// sandboxCache is the XDG cache folder the tests' CLI runs share (beside
// the test binary, removed by TestMain), so that the chat template guest
// compiles once for the package, not once per test.
func sandboxCache(t *testing.T) string {
	return filepath.Join(filepath.Dir(e2eBinary(t)), "xdg-cache")
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
// (model load and the sandbox's start included); a normal template runs; a
// failing one is exit 1 with the template's line and message.
func TestHostileTemplateCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", sandboxCache(t))
	path := templateModel(t, "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>")
	_, stderr, code := runIn(t, "", "run", "-m", path, "--chat", "-p", "hi", "-n", "1", "--sampler", "greedy")
	require.Equal(t, exitOK, code, stderr)
	for _, f := range failingTemplates[:2] { // TestTemplateRender runs the others
		t.Run(f.name, func(t *testing.T) {
			path := templateModel(t, f.template)
			stdout, stderr, code := runIn(t, "", "run", "-m", path, "--chat", "-p", "hi", "-n", "1")
			assert.Equal(t, exitFailure, code, stderr)
			assert.Contains(t, stderr, "the chat template failed: "+f.says)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		})
	}
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

// TestTemplateRender: template render prints exactly what Jinja2 renders
// (jinja/testdata/hf's expected renders, for a few templates and cases,
// with and without tools and the generation prompt), from --template or
// --model; a failing template exits 1 with its message and line, a
// hostile one 3, bad flags 2.
func TestTemplateRender(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", sandboxCache(t))
	hf := filepath.Join("..", "..", "internal", "jinja", "testdata", "hf")
	var set struct {
		Now   string          `json:"now"`
		BOS   string          `json:"bos_token"`
		EOS   string          `json:"eos_token"`
		Tools json.RawMessage `json:"tools"`
		Cases []struct {
			Name                string          `json:"name"`
			AddGenerationPrompt bool            `json:"add_generation_prompt"`
			Tools               bool            `json:"tools"`
			Messages            json.RawMessage `json:"messages"`
		} `json:"cases"`
	}
	data, err := os.ReadFile(filepath.Join(hf, "conversations.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &set))
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(tools, set.Tools, 0o644))
	checked := 0
	for _, name := range []string{"Qwen-Qwen2.5-7B-Instruct"} { // each process loads the sandbox: one case (jinja's suite has them all)

		data, err := os.ReadFile(filepath.Join(hf, "expected", name+".json"))
		require.NoError(t, err)
		var want map[string]struct {
			Text *string `json:"text"`
		}
		require.NoError(t, json.Unmarshal(data, &want))
		for _, c := range set.Cases {
			if c.Name != "tool_call_final" { // tools, tool calls, no generation prompt
				continue
			}
			args := []string{"template", "render", "--template", filepath.Join(hf, "templates", name+".jinja"),
				"--bos", set.BOS, "--eos", set.EOS, "--messages", string(c.Messages), "--now", set.Now}
			if c.Tools {
				args = append(args, "--tools", "@"+tools)
			}
			if !c.AddGenerationPrompt {
				args = append(args, "--no-generation-prompt")
			}
			stdout, stderr, code := runIn(t, "", args...)
			require.Equal(t, exitOK, code, stderr)
			require.NotNil(t, want[c.Name].Text, c.Name)
			assert.Equal(t, *want[c.Name].Text, stdout, name+"/"+c.Name)
			assert.Empty(t, stderr)
			checked++
		}
	}
	assert.Equal(t, 1, checked)

	// --model: the file's template with its vocabulary's BOS and EOS.
	path := templateModel(t, "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}{{ eos_token }}")
	stdout, stderr, code := runIn(t, "", "template", "render", "-m", path, "--messages", `[{"role": "user", "content": "hé"}]`)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "<s><|user|>hé<|assistant|></s>", stdout)

	msgs := `[{"role": "system", "content": "x"}]`
	for _, f := range failingTemplates[2:3] {
		file := filepath.Join(dir, "failing.jinja")
		require.NoError(t, os.WriteFile(file, []byte(f.template), 0o644))
		stdout, stderr, code := runIn(t, "", "template", "render", "--template", file, "--messages", msgs)
		assert.Equal(t, exitFailure, code, stderr)
		assert.Contains(t, stderr, f.says, f.name)
		assert.Empty(t, stdout)
	}
	file := filepath.Join(dir, "hostile.jinja")
	require.NoError(t, os.WriteFile(file, []byte(hostileTemplates[0].template), 0o644))
	_, stderr, code = runIn(t, "", "template", "render", "--template", file, "--messages", msgs)
	assert.Equal(t, exitBadFile, code, stderr)
	assert.Contains(t, stderr, "exceeded its limits")

	for _, args := range [][]string{
		{"--messages", msgs},
		{"--template", file, "-m", path, "--messages", msgs},
		{"--template", file},
		{"--template", file, "--messages", `[1]`},
		{"--template", file, "--messages", msgs, "--tools", `{}`},
		{"-m", path, "--bos", "x", "--messages", msgs},
	} {
		_, stderr, code := runIn(t, "", append([]string{"template", "render"}, args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
	}
}
