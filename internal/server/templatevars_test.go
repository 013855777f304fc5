package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// TestChatTemplateKwargs: chat_template_kwargs and Messages' thinking reach
// Qwen3's template through the sandbox: each request's prompt is the
// template rendered with those variables (usage counts its tokens;
// enable_thinking false closes an empty think block, true is the default),
// and count_tokens agrees.
func TestChatTemplateKwargs(t *testing.T) {
	r := testSandbox(t)
	template := readHFTemplate(t, "Qwen-Qwen3-0.6B.jinja")
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, template, r))
	msgs := []tokenizer.Message{{Role: "user", Content: "Think, then answer."}}
	promptTokens := func(vars map[string]json.RawMessage) int {
		text, _, err := s.model.Tokenizer.ApplyChatWith(tokenizer.RenderJinja, msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, Vars: vars})
		require.NoError(t, err)
		return len(s.model.Tokenizer.Encode(text, tokenizerOpts(true)))
	}
	off := map[string]json.RawMessage{"enable_thinking": json.RawMessage(`false`)}
	on := map[string]json.RawMessage{"enable_thinking": json.RawMessage(`true`)}
	require.Greater(t, promptTokens(off), promptTokens(nil), "the template closes a think block")
	require.Equal(t, promptTokens(on), promptTokens(nil))

	chat := `{"messages": [{"role": "user", "content": "Think, then answer."}], "max_tokens": 1%s}`
	anthropic := `{"messages": [{"role": "user", "content": "Think, then answer."}], "max_tokens": 2000%s}`
	for _, tc := range []struct {
		name, path, body string
		vars             map[string]json.RawMessage
	}{
		{"chat default", "/v1/chat/completions", fmt.Sprintf(chat, ""), nil},
		{"chat enable_thinking false", "/v1/chat/completions", fmt.Sprintf(chat, `, "chat_template_kwargs": {"enable_thinking": false}`), off},
		{"chat enable_thinking true", "/v1/chat/completions", fmt.Sprintf(chat, `, "chat_template_kwargs": {"enable_thinking": true, "other": [1]}`), on},
		{"messages thinking disabled", "/v1/messages/count_tokens", fmt.Sprintf(anthropic, `, "thinking": {"type": "disabled"}`), off},
		{"messages thinking enabled", "/v1/messages/count_tokens", fmt.Sprintf(anthropic, `, "thinking": {"type": "enabled", "budget_tokens": 1024}`), on},
		{"messages default", "/v1/messages/count_tokens", fmt.Sprintf(anthropic, ""), nil},
		{"chat reasoning_effort none", "/v1/chat/completions", fmt.Sprintf(chat, `, "chat_template_kwargs": {"enable_thinking": true}, "reasoning_effort": "none"`), off},
		{"chat reasoning_effort high", "/v1/chat/completions", fmt.Sprintf(chat, `, "reasoning_effort": "high"`), map[string]json.RawMessage{"reasoning_effort": json.RawMessage(`"high"`)}},
		{"responses reasoning effort none", "/v1/responses", `{"input": "Think, then answer.", "max_output_tokens": 1, "reasoning": {"effort": "none", "summary": "auto"}}`, off},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := s.do(t, "POST", tc.path, keyA, []byte(tc.body))
			require.Equal(t, http.StatusOK, code, string(b))
			var got struct {
				Usage *struct {
					PromptTokens int `json:"prompt_tokens"`
					InputTokens  int `json:"input_tokens"`
				} `json:"usage"`
				InputTokens int `json:"input_tokens"`
			}
			require.NoError(t, json.Unmarshal(b, &got))
			n := got.InputTokens
			if got.Usage != nil {
				n = got.Usage.PromptTokens + got.Usage.InputTokens
			}
			assert.Equal(t, promptTokens(tc.vars), n)
		})
	}
}

// TestThinkingFollowsTemplate: on a template whose generation prompt
// opens <think> unless enable_thinking is false, the reasoning split
// follows the rendered prompt: thinking on (the default, or Messages'
// thinking enabled) puts the text before </think> in reasoning_content /
// a thinking block; off (chat_template_kwargs, Messages' thinking
// disabled) leaves the whole text as the answer.
func TestThinkingFollowsTemplate(t *testing.T) {
	r := testSandbox(t)
	template := "{# a reply ends its reasoning with </think> #}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}" +
		"{% if add_generation_prompt %}assistant: {% if enable_thinking is not defined or enable_thinking %}<think>{% endif %}{% endif %}"
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, template, r))
	g, _ := json.Marshal("root ::= x x? \"</think>\" x x?\nx ::= [a-z]")
	chat := func(extra string) chatResponse {
		code, b := s.do(t, "POST", "/v1/chat/completions", keyA, []byte(`{"messages": [{"role": "user", "content": "Hi"}],
			"max_tokens": 20, "seed": 3, "top_k": 40, "grammar": `+string(g)+extra+`}`))
		require.Equal(t, http.StatusOK, code, string(b))
		var resp chatResponse
		require.NoError(t, json.Unmarshal(b, &resp))
		return resp
	}
	thinking := chat("").Choices[0].Message
	require.NotNil(t, thinking.ReasoningContent)
	assert.Regexp(t, `^[a-z]{1,2}$`, *thinking.ReasoningContent)
	assert.Regexp(t, `^[a-z]{1,2}$`, *thinking.Content)
	plain := chat(`, "chat_template_kwargs": {"enable_thinking": false}`).Choices[0].Message
	assert.Nil(t, plain.ReasoningContent)
	assert.Regexp(t, `^[a-z]{1,2}</think>[a-z]{1,2}$`, *plain.Content)

	messages := func(thinking string) anthropicMessageOut {
		code, b := s.do(t, "POST", "/v1/messages", keyA, []byte(`{"messages": [{"role": "user", "content": "Hi"}],
			"max_tokens": 2000, "seed": 3, "top_k": 40, "thinking": `+thinking+`, "grammar": `+string(g)+`}`))
		require.Equal(t, http.StatusOK, code, string(b))
		var m anthropicMessageOut
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	on := messages(`{"type": "enabled", "budget_tokens": 1024}`)
	require.Len(t, on.Content, 2)
	assert.Equal(t, "thinking", on.Content[0].Type)
	assert.Regexp(t, `^[a-z]{1,2}$`, *on.Content[0].Thinking)
	off := messages(`{"type": "disabled"}`)
	require.Len(t, off.Content, 1)
	assert.Equal(t, "text", off.Content[0].Type)
	assert.True(t, strings.Contains(*off.Content[0].Text, "</think>"), *off.Content[0].Text)
}

// TestTemplateKwargsRefused: malformed chat_template_kwargs and thinking
// parameters are 400s naming the field.
func TestTemplateKwargsRefused(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	many := map[string]int{}
	for i := range maxTemplateKwargs + 1 {
		many[fmt.Sprintf("k%d", i)] = i
	}
	chat := `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "chat_template_kwargs": %s}`
	msgs := `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2000, "thinking": %s}`
	for _, tc := range []struct {
		name, path, body, param string
	}{
		{"not an object", "/v1/chat/completions", fmt.Sprintf(chat, `[1]`), "chat_template_kwargs"},
		{"a string", "/v1/chat/completions", fmt.Sprintf(chat, `"enable_thinking"`), "chat_template_kwargs"},
		{"messages", "/v1/chat/completions", fmt.Sprintf(chat, `{"messages": []}`), "chat_template_kwargs.messages"},
		{"add_generation_prompt", "/v1/chat/completions", fmt.Sprintf(chat, `{"add_generation_prompt": false}`), "chat_template_kwargs.add_generation_prompt"},
		{"enable_thinking a string", "/v1/chat/completions", fmt.Sprintf(chat, `{"enable_thinking": "false"}`), "chat_template_kwargs.enable_thinking"},
		{"too many", "/v1/chat/completions", fmt.Sprintf(chat, jsonOf(t, many)), "chat_template_kwargs"},
		{"thinking type", "/v1/messages", fmt.Sprintf(msgs, `{"type": "sometimes"}`), "thinking.type"},
		{"thinking not an object", "/v1/messages", fmt.Sprintf(msgs, `true`), "thinking"},
		{"budget missing", "/v1/messages", fmt.Sprintf(msgs, `{"type": "enabled"}`), "thinking.budget_tokens"},
		{"budget small", "/v1/messages", fmt.Sprintf(msgs, `{"type": "enabled", "budget_tokens": 1023}`), "thinking.budget_tokens"},
		{"budget past max_tokens", "/v1/messages", fmt.Sprintf(msgs, `{"type": "enabled", "budget_tokens": 2000}`), "thinking.budget_tokens"},
		{"budget when disabled", "/v1/messages", fmt.Sprintf(msgs, `{"type": "disabled", "budget_tokens": 1024}`), "thinking.budget_tokens"},
		{"reasoning_effort", "/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}], "reasoning_effort": "extreme"}`, "reasoning_effort"},
		{"reasoning.effort", "/v1/responses", `{"input": "Hi", "reasoning": {"effort": "extreme"}}`, "reasoning.effort"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := s.do(t, "POST", tc.path, keyA, []byte(tc.body))
			require.Equal(t, http.StatusBadRequest, code, string(b))
			var param string
			if strings.HasPrefix(tc.path, "/v1/messages") {
				var e struct {
					Error struct {
						Type    string `json:"type"`
						Message string `json:"message"`
					} `json:"error"`
				}
				require.NoError(t, json.Unmarshal(b, &e))
				assert.Equal(t, "invalid_request_error", e.Error.Type)
				assert.Contains(t, e.Error.Message, tc.param)
				return
			}
			param = errorOf(t, b).Param
			assert.Equal(t, tc.param, param)
		})
	}
}

// TestQwen3ThinkingSwitch: on the qwen3-tiny fixture (Qwen3's architecture
// and its 151,936-token vocabulary, narrowed to one 64-wide layer) with
// Qwen3's template, enable_thinking false (chat_template_kwargs, or
// Messages' thinking disabled) adds exactly the tokens of the empty think
// block the template closes, "<think>\n\n</think>\n\n", to the prompt.
func TestQwen3ThinkingSwitch(t *testing.T) {
	vocab, err := gguf.Open(testenv.VocabFile(t, fixture.VocabFile("qwen3")))
	require.NoError(t, err)
	defer vocab.Close()
	c := fixture.Qwen3Tiny()
	c.Embd, c.FF, c.Layers, c.Heads, c.HeadsKV, c.KeyLength = 64, 128, 1, 2, 1, 32
	path := filepath.Join(t.TempDir(), "qwen3-tiny.gguf")
	require.NoError(t, fixture.GenerateFile(path, c, vocab))
	r := testSandbox(t)
	s := startServerWith(t, testTenantsFile(), Config{}, func(m *Model, mdl *model.Model) {
		withToolFile(t, path, readHFTemplate(t, "Qwen-Qwen3-0.6B.jinja"), r)(m, mdl)
	})
	prompt := func(path, body string) int {
		code, b := s.do(t, "POST", path, keyA, []byte(body))
		require.Equal(t, http.StatusOK, code, string(b))
		var got struct {
			Usage       *usage `json:"usage"`
			InputTokens int    `json:"input_tokens"`
		}
		require.NoError(t, json.Unmarshal(b, &got))
		if got.Usage != nil {
			return got.Usage.PromptTokens
		}
		return got.InputTokens
	}
	chat := `{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 1, "temperature": 0%s}`
	on := prompt("/v1/chat/completions", fmt.Sprintf(chat, ""))
	off := prompt("/v1/chat/completions", fmt.Sprintf(chat, `, "chat_template_kwargs": {"enable_thinking": false}`))
	block := len(s.model.Tokenizer.Encode("<think>\n\n</think>\n\n", tokenizerOpts(false)))
	assert.Equal(t, on+block, off)
	msgs := `{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 2000, "thinking": %s}`
	assert.Equal(t, off, prompt("/v1/messages/count_tokens", fmt.Sprintf(msgs, `{"type": "disabled"}`)))
	assert.Equal(t, on, prompt("/v1/messages/count_tokens", fmt.Sprintf(msgs, `{"type": "enabled", "budget_tokens": 1024}`)))
}

// TestWithReasoningEffort: none turns thinking off and drops a
// reasoning_effort variable; another effort becomes the variable; nil
// leaves the variables alone; an unknown effort is a 400.
func TestWithReasoningEffort(t *testing.T) {
	str := func(s string) *string { return &s }
	kw := map[string]json.RawMessage{"enable_thinking": json.RawMessage(`true`), "reasoning_effort": json.RawMessage(`"high"`), "x": json.RawMessage(`1`)}
	for _, tc := range []struct {
		effort *string
		want   map[string]json.RawMessage
	}{
		{nil, kw},
		{str("none"), map[string]json.RawMessage{"enable_thinking": json.RawMessage(`false`), "x": json.RawMessage(`1`)}},
		{str("low"), map[string]json.RawMessage{"enable_thinking": json.RawMessage(`true`), "reasoning_effort": json.RawMessage(`"low"`), "x": json.RawMessage(`1`)}},
	} {
		got, err := withReasoningEffort(kw, tc.effort, "reasoning_effort")
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	assert.Equal(t, json.RawMessage(`"high"`), kw["reasoning_effort"], "the request's own map is not changed")
	_, err := withReasoningEffort(nil, str("max"), "reasoning_effort")
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "reasoning_effort", ae.Param)
}

// TestMessagesThinkingSplit: on a template that does not mention </think>
// (reasoning_format auto would not split), Messages' thinking enabled
// splits a forced <think> block into a thinking block, disabled leaves it
// in the text, and reasoning_format, when given, still decides.
func TestMessagesThinkingSplit(t *testing.T) {
	r := testSandbox(t)
	template := "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}"
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, template, r))
	g, _ := json.Marshal(thinkGrammar)
	messages := func(extra string) anthropicMessageOut {
		code, b := s.do(t, "POST", "/v1/messages", keyA, []byte(`{"messages": [{"role": "user", "content": "Hi"}],
			"max_tokens": 2000, "seed": 4, "top_k": 40, "grammar": `+string(g)+extra+`}`))
		require.Equal(t, http.StatusOK, code, string(b))
		var m anthropicMessageOut
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	plain := messages("")
	require.Len(t, plain.Content, 1, "auto does not split for this template")
	assert.Regexp(t, `^<think>[a-z]{1,3}</think>[a-z]{1,3}$`, *plain.Content[0].Text)
	on := messages(`, "thinking": {"type": "enabled", "budget_tokens": 1024}`)
	require.Len(t, on.Content, 2)
	assert.Equal(t, "thinking", on.Content[0].Type)
	assert.Equal(t, *plain.Content[0].Text, "<think>"+*on.Content[0].Thinking+"</think>"+*on.Content[1].Text)
	off := messages(`, "thinking": {"type": "disabled"}`)
	require.Len(t, off.Content, 1)
	assert.Equal(t, *plain.Content[0].Text, *off.Content[0].Text)
	overruled := messages(`, "thinking": {"type": "enabled", "budget_tokens": 1024}, "reasoning_format": "none"`)
	require.Len(t, overruled.Content, 1)
	assert.Equal(t, *plain.Content[0].Text, *overruled.Content[0].Text)
}
