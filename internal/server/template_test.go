package server

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/chatsandbox"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// hostileChatTemplate turns hostile (issue 19's templates) on the first
// message's content, and renders a plain prompt otherwise.
const hostileChatTemplate = `{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}` +
	`{% set c = messages[0].content %}` +
	`{% if c == 'div' %}{{ 1 % 0 }}` +
	`{% elif c == 'rep' %}{{ 'a' * 1000000000 }}` +
	`{% elif c == 'macro' %}{{ f(0) }}` +
	`{% elif c == 'range' %}{% for i in range(100000000) %}{% endfor %}` +
	`{% elif c == 'slow' %}{% for i in range(100000) %}{{ ('ab' * 500000)|length }}{% endfor %}` +
	`{% else %}<|user|>{{ c }}<|assistant|>{% endif %}`

// withChatTemplate gives the server's model the fixture's tokenizer with
// template and renders it in the sandbox r.
func withChatTemplate(t *testing.T, template string, r *chatsandbox.Renderer) func(*Model, *model.Model) {
	return func(m *Model, _ *model.Model) {
		f, err := gguf.Open(fixturePath)
		require.NoError(t, err)
		defer f.Close()
		spec, err := tokenizer.SpecFromGGUF(f)
		require.NoError(t, err)
		spec.ChatTemplate = template
		m.Tokenizer, err = tokenizer.New(spec)
		require.NoError(t, err)
		m.RenderChat = r.Render
	}
}

func chatBody(content string) []byte {
	return fmt.Appendf(nil, `{"messages":[{"role":"user","content":%q}],"max_tokens":2}`, content)
}

// TestHostileChatTemplate: each hostile template is a 400 naming the
// template, within the sandbox's deadline plus slack: a limit for those
// that would exhaust the server, the template's line and exception for
// those Jinja2's sandbox refuses (division by zero, a huge range); the
// server stays up and serves the next request.
func TestHostileChatTemplate(t *testing.T) {
	r := testSandbox(t)
	ts := startServerWith(t, testTenantsFile(), Config{}, withChatTemplate(t, hostileChatTemplate, r))
	for c, says := range map[string]string{"div": "line 1: ZeroDivisionError", "rep": "exceeded its limits", "macro": "exceeded its limits", "range": "line 1: OverflowError"} {
		t.Run(c, func(t *testing.T) {
			start := time.Now()
			code, body := ts.do(t, "POST", "/v1/chat/completions", keyA, chatBody(c))
			elapsed := time.Since(start)
			require.Equal(t, http.StatusBadRequest, code, string(body))
			e := errorOf(t, body)
			assert.Equal(t, "chat_template_failed", e.Code)
			assert.Contains(t, e.Message, "tokenizer.chat_template")
			assert.Contains(t, e.Message, chatsandbox.TemplateName(hostileChatTemplate))
			assert.Contains(t, e.Message, says)
			assert.NotContains(t, e.Message, "/")
			assert.Less(t, elapsed, chatsandbox.DefaultTimeout+3*time.Second)
			t.Logf("%v: %s", elapsed.Round(time.Millisecond), e.Message)

			code, body = ts.do(t, "POST", "/v1/chat/completions", keyB, chatBody("hello"))
			require.Equal(t, http.StatusOK, code, string(body))
		})
	}
}

// TestChatTemplateWithinAdmission: rendering counts against the tenant's
// max_concurrent: while one request of tenant a renders a slow template,
// a second one of a is refused (429) and tenant b is served.
func TestChatTemplateWithinAdmission(t *testing.T) {
	r := testSandbox(t)
	tenants := fmt.Appendf(nil, `{
  "defaults": {"step_deadline": "2s", "max_concurrent": 1, "requests_per_minute": 100000, "memory_pages": 64},
  "tenants": [{"name": "a", "key_sha256": [%q]}, {"name": "b", "key_sha256": [%q]}]
}`, tenancy.HashKey(keyA), tenancy.HashKey(keyB))
	ts := startServerWith(t, tenants, Config{}, withChatTemplate(t, hostileChatTemplate, r))
	var wg sync.WaitGroup
	wg.Add(1)
	var slowCode int
	go func() {
		defer wg.Done()
		slowCode, _ = ts.do(t, "POST", "/v1/chat/completions", keyA, chatBody("slow"))
	}()
	time.Sleep(500 * time.Millisecond) // the slow render is under way
	code, body := ts.do(t, "POST", "/v1/chat/completions", keyA, chatBody("hello"))
	assert.Equal(t, http.StatusTooManyRequests, code, string(body))
	code, body = ts.do(t, "POST", "/v1/chat/completions", keyB, chatBody("hello"))
	assert.Equal(t, http.StatusOK, code, string(body))
	wg.Wait()
	assert.Equal(t, http.StatusBadRequest, slowCode)
}
