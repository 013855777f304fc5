package chatsandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/internal/chatsandbox"
	"github.com/realizar-host/realizar-host/internal/jinja"
	"github.com/realizar-host/realizar-host/tokenizer"
)

var chatMsgs = []tokenizer.Message{
	{Role: "system", Content: "Be brief."},
	{Role: "user", Content: "Hi"},
	{Role: "assistant", Content: "Hello"},
	{Role: "user", Content: "Again"},
}

var (
	sharedOnce  sync.Once
	shared      *chatsandbox.Renderer
	sharedErr   error
	sharedCache = wazero.NewCompilationCache()
)

// renderer is one Renderer for the package's tests (compiling the guest
// takes seconds).
func renderer(t testing.TB) *chatsandbox.Renderer {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = chatsandbox.New(context.Background(), chatsandbox.Config{Cache: sharedCache})
	})
	require.NoError(t, sharedErr)
	return shared
}

// TestMatchesInProcess: the sandbox renders what tokenizer.RenderJinja
// renders, for the published templates and a few constructs, errors
// included.
func TestMatchesInProcess(t *testing.T) {
	r := renderer(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "tokenizer", "testdata", "chat", "*.jinja"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	cases := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		cases[filepath.Base(f)] = string(src)
	}
	// The templates of llama.cpp's vocabulary files, where installed
	// (make ref-install).
	vocabs, _ := filepath.Glob(filepath.Join("..", "..", ".cache", "llamaref", "vocab", "ggml-vocab-*.gguf"))
	for _, v := range vocabs {
		tok, err := tokenizer.Open(v)
		if err == nil && tok.ChatTemplate() != "" {
			cases[filepath.Base(v)] = tok.ChatTemplate()
		}
	}
	t.Logf("%d templates from vocabulary files", len(cases)-len(files))
	cases["loop"] = "{% for m in messages %}{{ loop.index }}:{{ m.role|upper }}={{ m.content|trim }};{% endfor %}{% if add_generation_prompt %}>{% endif %}{{ bos_token }}{{ eos_token }}"
	cases["unicode"] = "{{ messages[0].content ~ ' ünï ' ~ '😀' }}"
	cases["vars"] = "{{ enable_thinking is defined }}|{{ extra.a[1] if extra is defined else '' }}"
	cases["syntax error"] = "{% for %}"
	cases["raise_exception"] = "{{ raise_exception('roles must alternate') }}"
	cases["tools"] = "{{ tools|tojson }}|{{ messages[0].content[0].text }}|{{ strftime_now('%d %b %Y') }}"
	for name, src := range cases {
		for _, gen := range []bool{false, true} {
			opts := tokenizer.ChatOptions{AddGenerationPrompt: gen, BOS: "<s>", EOS: "</s>", Now: time.Date(2025, 7, 4, 9, 5, 3, 0, time.UTC)}
			msgs := chatMsgs
			if gen {
				// chat_template_kwargs: seen by the templates that read them (Qwen3's enable_thinking).
				opts.Vars = map[string]json.RawMessage{"enable_thinking": json.RawMessage(`false`), "extra": json.RawMessage(`{"a": [1, "b"]}`)}
			}
			if name == "tools" {
				opts.Tools = json.RawMessage(`[{"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": 2.0}}}]`)
				msgs = []tokenizer.Message{{Raw: json.RawMessage(`{"role": "user", "content": [{"type": "text", "text": "ünï"}]}`)}}
			}
			want, wantErr := tokenizer.RenderJinja(src, msgs, opts)
			got, err := r.Render(context.Background(), src, msgs, opts)
			if wantErr != nil {
				require.ErrorIs(t, err, tokenizer.ErrTemplate, name)
				assert.NotErrorIs(t, err, tokenizer.ErrTemplateLimit, name)
				assert.Equal(t, wantErr.Error(), err.Error(), name)
				continue
			}
			require.NoError(t, err, name)
			assert.Equal(t, want, got, name)
		}
	}
}

// hostile are templates that would exhaust an unbounded renderer: issue
// 19's (which panicked gonja, killed the process or ran for minutes) and
// one that only the deadline ends (the last: it runs 2 s).
var hostile = []struct {
	name, template, says string
}{
	{"huge repetition", "{{ 'a' * 1000000000 }}", "over the 1048576-byte cap"},
	{"huge repetition in a loop", "{% set s = 'abcdefgh' * 1000000 %}{% for i in range(100) %}{{ s }}{% endfor %}", "over the 1048576-byte cap"},
	{"huge output", "{% for i in range(300) %}{{ 'abcdefgh' * 1000 }}{% endfor %}", "output"},
	{"recursive macro", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "RecursionError|memory cap|ran past"},
	{"endless work", "{% for i in range(100000) %}{{ ('ab' * 500000)|length }}{% endfor %}", "ran past"},
}

// TestTemplateErrors: what Jinja2's sandbox refuses with an exception is
// a template error naming the line, not a limit: issue 19's division by
// zero and huge range among them.
func TestTemplateErrors(t *testing.T) {
	r := renderer(t)
	for _, tc := range []struct{ template, says string }{
		{"x\n{{ 1 % 0 }}", "line 2: ZeroDivisionError"},
		{"{% for i in range(100000000) %}{% endfor %}", "line 1: OverflowError: Range too big"},
		{"{% if true %}\n{{ raise_exception('System role not supported') }}{% endif %}", "line 2: System role not supported"},
		{"{% for %}", "line 1: "},
	} {
		_, err := r.Render(context.Background(), tc.template, chatMsgs, tokenizer.ChatOptions{})
		require.ErrorIs(t, err, tokenizer.ErrTemplate, tc.template)
		assert.NotErrorIs(t, err, tokenizer.ErrTemplateLimit, tc.template)
		assert.Contains(t, err.Error(), tc.says)
		var je *jinja.Error
		require.ErrorAs(t, err, &je)
		assert.Positive(t, je.Line)
	}
}

// TestHostile: each hostile template is an error wrapping ErrTemplate and
// ErrTemplateLimit, within the deadline plus slack, naming the template;
// the Renderer then renders a normal template.
func TestHostile(t *testing.T) {
	r := renderer(t)
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			start := time.Now()
			_, err := r.Render(context.Background(), h.template, chatMsgs, tokenizer.ChatOptions{})
			elapsed := time.Since(start)
			require.ErrorIs(t, err, tokenizer.ErrTemplate)
			require.ErrorIs(t, err, tokenizer.ErrTemplateLimit)
			var le *chatsandbox.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, chatsandbox.TemplateName(h.template), le.Template)
			assert.Regexp(t, h.says, le.Reason)
			assert.Contains(t, err.Error(), chatsandbox.TemplateName(h.template))
			assert.NotContains(t, err.Error(), "/work")
			assert.Less(t, elapsed, chatsandbox.DefaultTimeout+3*time.Second)
			t.Logf("%v in %v", err, elapsed.Round(time.Millisecond))

			got, err := r.Render(context.Background(), "{{ messages[1].content }}", chatMsgs, tokenizer.ChatOptions{})
			require.NoError(t, err)
			assert.Equal(t, "Hi", got)
		})
	}
}

// TestCallerCancel: the caller's cancellation stops a render and is not a
// template limit.
func TestCallerCancel(t *testing.T) {
	r := renderer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Render(ctx, hostile[len(hostile)-1].template, chatMsgs, tokenizer.ChatOptions{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, tokenizer.ErrTemplateLimit)
	assert.Less(t, time.Since(start), time.Second)
}

// TestOutputCap: the output cap is exact.
func TestOutputCap(t *testing.T) {
	renderer(t) // compiles into sharedCache
	r, err := chatsandbox.New(context.Background(), chatsandbox.Config{OutputBytes: 10, Cache: sharedCache})
	require.NoError(t, err)
	defer r.Close(context.Background())
	got, err := r.Render(context.Background(), "0123456789", nil, tokenizer.ChatOptions{})
	require.NoError(t, err)
	assert.Equal(t, "0123456789", got)
	_, err = r.Render(context.Background(), "0123456789A", nil, tokenizer.ChatOptions{})
	require.ErrorIs(t, err, tokenizer.ErrTemplateLimit)
	assert.Regexp(t, "output (exceeds 10 bytes|is over the 10-byte cap)", err.Error())
}

// TestConcurrent: past Config.Concurrent renders at once, a render waits
// for a place under its caller's context (not as a template limit).
func TestConcurrent(t *testing.T) {
	renderer(t) // compiles into sharedCache
	r, err := chatsandbox.New(context.Background(), chatsandbox.Config{Concurrent: 1, Cache: sharedCache})
	require.NoError(t, err)
	defer r.Close(context.Background())
	slow := make(chan error, 1)
	go func() {
		_, err := r.Render(context.Background(), hostile[len(hostile)-1].template, chatMsgs, tokenizer.ChatOptions{})
		slow <- err
	}()
	time.Sleep(300 * time.Millisecond) // the slow render holds the one place
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = r.Render(ctx, "hi", nil, tokenizer.ChatOptions{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, tokenizer.ErrTemplateLimit)
	assert.Contains(t, err.Error(), "waiting for a place")
	require.ErrorIs(t, <-slow, tokenizer.ErrTemplateLimit)
	got, err := r.Render(context.Background(), "hi", nil, tokenizer.ChatOptions{})
	require.NoError(t, err)
	assert.Equal(t, "hi", got)
}

// TestMemoryReturns: after the hostile templates (each growing the guest's
// memory to its cap), the host's live heap comes back within 10% of what
// it was after one normal render, once collected (debug.FreeOSMemory).
func TestMemoryReturns(t *testing.T) {
	r := renderer(t)
	_, err := r.Render(context.Background(), "{{ messages[0].content }}", chatMsgs, tokenizer.ChatOptions{})
	require.NoError(t, err)
	heap := func() uint64 {
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for _, h := range hostile[:4] { // not the loops: memory, not time
		_, err := r.Render(context.Background(), h.template, chatMsgs, tokenizer.ChatOptions{})
		require.ErrorIs(t, err, tokenizer.ErrTemplateLimit)
	}
	// An instance's memory goes with its last reference, which the
	// runtime's close-on-done watcher may hold a moment after Render
	// returns; a loaded machine (CI runs packages in parallel) stretches
	// that moment, so the heap is given a second to come back.
	after := heap()
	for i := 0; i < 10 && float64(after) >= 1.1*float64(before); i++ {
		time.Sleep(100 * time.Millisecond)
		after = heap()
	}
	t.Logf("live heap %d before, %d after", before, after)
	assert.Less(t, float64(after), 1.1*float64(before))
}
