package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/jinja"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

var chatMsgs = []Message{
	{Role: "system", Content: "Be brief."},
	{Role: "user", Content: "Hi"},
	{Role: "assistant", Content: "Hello"},
	{Role: "user", Content: "Again"},
}

func TestRenderBuiltin(t *testing.T) {
	cases := []struct {
		format ChatFormat
		want   string
	}{
		{FormatChatML, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n"},
		{FormatLlama3, "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAgain<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{FormatZephyr, "<|system|>\nBe brief.<|endoftext|>\n<|user|>\nHi<|endoftext|>\n<|assistant|>\nHello<|endoftext|>\n<|user|>\nAgain<|endoftext|>\n<|assistant|>\n"},
		{FormatLlama2, "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello</s>[INST] Again [/INST]"},
	}
	for _, c := range cases {
		t.Run(string(c.format), func(t *testing.T) {
			got, err := RenderBuiltin(c.format, chatMsgs, true)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	_, err := RenderBuiltin(FormatJinja, chatMsgs, true)
	require.ErrorIs(t, err, ErrUnsupported)
}

// TestJinjaMatchesBuiltin renders real chat templates with the Jinja engine
// and compares them with the built-in renderer of the same family: the
// qwen2 vocabulary's own template (ChatML), and the published Llama 3,
// Llama 2 and Zephyr templates under testdata/chat.
func TestJinjaMatchesBuiltin(t *testing.T) {
	files := []struct {
		file   string
		format ChatFormat
		opts   ChatOptions
		fixup  func(builtin string) string
	}{
		// The published Llama 3 template prepends bos_token.
		{"llama3.jinja", FormatLlama3, ChatOptions{BOS: "<|begin_of_text|>"}, func(s string) string { return "<|begin_of_text|>" + s }},
		{"zephyr.jinja", FormatZephyr, ChatOptions{}, nil},
		// The published Llama 2 template ends assistant turns with
		// eos_token and opens every user turn with "[INST] ".
		{"llama2.jinja", FormatLlama2, ChatOptions{EOS: "</s>"}, nil},
	}
	for _, f := range files {
		t.Run(f.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "chat", f.file))
			require.NoError(t, err)
			assert.Equal(t, f.format, DetectFormat(string(src)))
			opts := f.opts
			opts.AddGenerationPrompt = f.format != FormatLlama2
			got, err := RenderJinja(string(src), chatMsgs, opts)
			require.NoError(t, err)
			want, err := RenderBuiltin(f.format, chatMsgs, opts.AddGenerationPrompt)
			require.NoError(t, err)
			if f.fixup != nil {
				want = f.fixup(want)
			}
			assert.Equal(t, want, got)
		})
	}
	t.Run("qwen2 gguf", func(t *testing.T) {
		tok := loadVocab(t, "qwen2")
		require.NotEmpty(t, tok.ChatTemplate())
		assert.Equal(t, FormatChatML, DetectFormat(tok.ChatTemplate()))
		got, used, err := tok.ApplyChat(chatMsgs, ChatOptions{AddGenerationPrompt: true})
		require.NoError(t, err)
		assert.Equal(t, FormatJinja, used)
		want, _ := RenderBuiltin(FormatChatML, chatMsgs, true)
		assert.Equal(t, want, got)
		// Without a system message Qwen's template adds its default one.
		got, _, _ = tok.ApplyChat(chatMsgs[1:2], ChatOptions{AddGenerationPrompt: true})
		assert.Equal(t, "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", got)
		ids := tok.Encode(got, EncodeOptions{AddSpecial: true, ParseSpecial: true})
		assert.Equal(t, int32(151644), ids[0], "<|im_start|> is one token")
	})
}

func TestJinjaErrors(t *testing.T) {
	_, err := RenderJinja("{% for %}", chatMsgs, ChatOptions{})
	require.ErrorIs(t, err, ErrTemplate)
	_, err = RenderJinja("{{ raise_exception('roles must alternate') }}", chatMsgs, ChatOptions{})
	require.ErrorIs(t, err, ErrTemplate)
	assert.Contains(t, err.Error(), "roles must alternate")
}

// TestApplyChatNoFallback: no template means ChatML; a template that
// fails is an error naming its line, not another format.
func TestApplyChatNoFallback(t *testing.T) {
	tok := tinyBPE(t, "gpt-2")
	got, used, err := tok.ApplyChat(chatMsgs[:2], ChatOptions{AddGenerationPrompt: true})
	require.NoError(t, err)
	assert.Equal(t, FormatChatML, used)
	want, _ := RenderBuiltin(FormatChatML, chatMsgs[:2], true)
	assert.Equal(t, want, got)

	tok.chatTemplate = "<|start_header_id|>x<|end_header_id|>\n{% if %}"
	got, used, err = tok.ApplyChat(chatMsgs[:2], ChatOptions{AddGenerationPrompt: true})
	require.ErrorIs(t, err, ErrTemplate)
	assert.Empty(t, got)
	assert.Equal(t, FormatJinja, used)
	var je *jinja.Error
	require.ErrorAs(t, err, &je)
	assert.Equal(t, 2, je.Line)
	assert.Contains(t, err.Error(), "line 2")

	tok.chatTemplate = "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
	_, _, err = tok.ApplyChat(chatMsgs[:2], ChatOptions{})
	require.ErrorAs(t, err, &je)
	assert.True(t, je.Raised)
	assert.Equal(t, "System role not supported", je.Msg)
}

// TestRenderJinjaVariables: raw messages (list contents, tool calls with
// arguments as objects, in their key order), tools (None when absent) and
// a fixed now reach the template as transformers passes them.
func TestRenderJinjaVariables(t *testing.T) {
	msgs := []Message{
		{Role: "user", Raw: json.RawMessage(`{"role": "user", "content": [{"type": "text", "text": "héllo"}]}`)},
		{Role: "assistant", Raw: json.RawMessage(`{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"z": 1, "a": [true, null]}}}]}`)},
		{Role: "tool", Content: "42"},
	}
	tpl := "{{ tools }}|{% for m in messages %}{{ m.role }}:{{ m.content }}{% if m.tool_calls %}{{ m.tool_calls[0].function.arguments|tojson }}{% endif %};{% endfor %}|{{ strftime_now('%Y-%m-%d') }}"
	now := time.Date(2024, 2, 29, 23, 0, 0, 0, time.UTC)
	got, err := RenderJinja(tpl, msgs, ChatOptions{Now: now})
	require.NoError(t, err)
	assert.Equal(t, `None|user:[{'type': 'text', 'text': 'héllo'}];assistant:{"z": 1, "a": [true, null]};tool:42;|2024-02-29`, got)
	got, err = RenderJinja("{{ tools[0].function.name }}", nil, ChatOptions{Tools: json.RawMessage(`[{"type": "function", "function": {"name": "get_time"}}]`)})
	require.NoError(t, err)
	assert.Equal(t, "get_time", got)
	_, err = RenderJinja("x", []Message{{Raw: json.RawMessage(`[1]`)}}, ChatOptions{})
	assert.ErrorIs(t, err, ErrTemplate)
	_, err = RenderJinja("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", nil, ChatOptions{})
	assert.ErrorIs(t, err, ErrTemplateLimit)
}

// TestRenderJinjaVars: ChatOptions.Vars reach the template as JSON values
// (chat_template_kwargs), after and over the standard variables; Qwen3's
// template closes an empty think block when enable_thinking is false.
func TestRenderJinjaVars(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]json.RawMessage
		want string
	}{
		{"none", nil, "False|None|x"},
		{"bool and object", map[string]json.RawMessage{"enable_thinking": json.RawMessage(`false`), "o": json.RawMessage(`{"k": [1, "s"]}`)}, "True|[1, 's']|x"},
		{"over a standard variable", map[string]json.RawMessage{"bos_token": json.RawMessage(`"<B>"`)}, "False|None|<B>"},
	} {
		got, err := RenderJinja("{{ enable_thinking is defined and enable_thinking is false }}|{{ o.k if o is defined else None }}|{{ bos_token }}",
			nil, ChatOptions{BOS: "x", Vars: tc.vars})
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	b, err := os.ReadFile(filepath.Join("..", "internal", "jinja", "testdata", "hf", "templates", "Qwen-Qwen3-0.6B.jinja"))
	require.NoError(t, err)
	msgs := []Message{{Role: "user", Content: "hi"}}
	on, err := RenderJinja(string(b), msgs, ChatOptions{AddGenerationPrompt: true})
	require.NoError(t, err)
	off, err := RenderJinja(string(b), msgs, ChatOptions{AddGenerationPrompt: true, Vars: map[string]json.RawMessage{"enable_thinking": json.RawMessage(`false`)}})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(on, "<|im_start|>assistant\n"), on)
	assert.Equal(t, on+"<think>\n\n</think>\n\n", off)
}

func TestDetectFormat(t *testing.T) {
	cases := map[string]ChatFormat{
		"":                                     FormatChatML,
		"{{ '<|im_start|>' }}":                 FormatChatML,
		"[INST] {{ x }} [/INST]":               FormatLlama2,
		"<|user|>{{x}}<|endoftext|>":           FormatZephyr,
		"<|start_header_id|><|end_header_id|>": FormatLlama3,
		"something else":                       FormatChatML,
	}
	for src, want := range cases {
		assert.Equal(t, want, DetectFormat(src), src)
	}
}

// A template that renders bos_token first gives one BOS after Encode with
// AddSpecial, as llama.cpp's chat path strips it (common_chat_templates_apply);
// raw text that starts with the BOS text keeps both ids, as llama_tokenize
// does. A vocabulary that adds no BOS keeps the rendered one.
func TestApplyChatBOSOnce(t *testing.T) {
	tok, err := Open(filepath.Join(testenv.VocabDir(t), "ggml-vocab-llama-spm.gguf")) // its own: the test edits it
	require.NoError(t, err)
	require.True(t, tok.AddBOS())
	bos := tok.TokenText(tok.BOS())
	tok.chatTemplate = "{{ bos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}"
	got, used, err := tok.ApplyChat(chatMsgs[:2], ChatOptions{AddGenerationPrompt: true})
	require.NoError(t, err)
	assert.Equal(t, FormatJinja, used)
	assert.False(t, strings.HasPrefix(got, bos), got)
	opts := EncodeOptions{AddSpecial: true, ParseSpecial: true}
	ids := tok.Encode(got, opts)
	assert.Equal(t, tok.BOS(), ids[0])
	assert.NotEqual(t, tok.BOS(), ids[1], "one BOS")

	raw := tok.Encode(bos+"Hi", opts)
	assert.Equal(t, []int32{tok.BOS(), tok.BOS()}, raw[:2], "raw text keeps both, as llama_tokenize")

	tok.addBOS = false
	got, _, _ = tok.ApplyChat(chatMsgs[:2], ChatOptions{AddGenerationPrompt: true})
	assert.True(t, strings.HasPrefix(got, bos), got)
}
