package tokenizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/realizar-host/realizar-host/internal/jinja"
)

// Message is one chat turn.
type Message struct {
	Role    string // "system", "user", "assistant" or "tool"
	Content string
	// Raw, when not nil, is the whole message as the JSON object a chat
	// template sees (as transformers passes it: content a string or a list
	// of {"type": "text", ...} parts, tool_calls with arguments as an
	// object, tool_call_id, name, reasoning_content); Role and Content then
	// serve the built-in formats only. nil: the template sees
	// {"role": Role, "content": Content}.
	Raw json.RawMessage
}

// ChatFormat names how a conversation was rendered.
type ChatFormat string

// Chat formats: the file's own Jinja template, or a built-in renderer.
const (
	FormatJinja  ChatFormat = "jinja"  // tokenizer.chat_template rendered by the Jinja engine
	FormatChatML ChatFormat = "chatml" // <|im_start|>role\ncontent<|im_end|>\n
	FormatLlama2 ChatFormat = "llama2" // [INST] <<SYS>>\n…\n<</SYS>>\n\nuser [/INST]assistant</s>
	FormatLlama3 ChatFormat = "llama3" // <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
	FormatZephyr ChatFormat = "zephyr" // <|role|>\ncontent<|endoftext|>\n
)

// ErrTemplate wraps a failure to parse or render a Jinja chat template.
// The *jinja.Error it carries (errors.As) has the template line and the
// template's own message (raise_exception's text).
var ErrTemplate = errors.New("tokenizer: chat template")

// ErrTemplateLimit marks a template that a renderer stopped: it ran past
// its step, output, memory or time budget, or crashed the engine. Such
// errors also wrap ErrTemplate.
var ErrTemplateLimit = errors.New("chat template exceeded its limits")

// JinjaRenderer renders a chat template with the variables RenderJinja
// defines. RenderJinja is one (in-process, under jinja.DefaultLimits but
// with no memory cap or deadline: for trusted templates);
// chatsandbox.Renderer.Func gives one that runs the same engine in a
// WebAssembly sandbox under a deadline and memory cap.
type JinjaRenderer func(template string, msgs []Message, opts ChatOptions) (string, error)

// ChatOptions are the variables a chat template sees besides the messages.
type ChatOptions struct {
	// AddGenerationPrompt ends the prompt with the assistant's header, so
	// the model answers (add_generation_prompt).
	AddGenerationPrompt bool
	// BOS and EOS are the bos_token and eos_token texts a template may use.
	// ApplyChat sets them from the vocabulary.
	BOS, EOS string
	// Tools is the JSON array of tool definitions the template sees as
	// tools ({"type": "function", "function": {...}} objects); nil means
	// none, and tools is then None, as transformers passes it.
	Tools json.RawMessage
	// Now is the time strftime_now formats, in its own location; the zero
	// Time means the current time.
	Now time.Time
	// Vars are further variables the template sees, each a JSON value by
	// name (llama-server's chat_template_kwargs, such as enable_thinking:
	// false for Qwen3). Set after the variables above, so a name of theirs
	// replaces it, as llama.cpp's extra context does.
	Vars map[string]json.RawMessage
}

// MessagesJSON is msgs as the JSON array a template sees: each message's
// Raw, or {"role": ..., "content": ...}. A Raw that is not a JSON object
// is an error.
func MessagesJSON(msgs []Message) (json.RawMessage, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		if m.Raw != nil {
			raw := strings.TrimSpace(string(m.Raw))
			if !strings.HasPrefix(raw, "{") || !json.Valid(m.Raw) {
				return nil, fmt.Errorf("%w: message %d is not a JSON object", ErrTemplate, i)
			}
			b.WriteString(raw)
			continue
		}
		role, _ := json.Marshal(m.Role)
		content, _ := json.Marshal(m.Content)
		b.WriteString(`{"role":` + string(role) + `,"content":` + string(content) + `}`)
	}
	b.WriteByte(']')
	return json.RawMessage(b.String()), nil
}

// ChatVars are the variables transformers' apply_chat_template passes:
// messages, tools (nil: None), add_generation_prompt, bos_token and
// eos_token, as jinja.Template.Render takes them.
func ChatVars(msgs []Message, opts ChatOptions) (map[string]any, error) {
	list, err := MessagesJSON(msgs)
	if err != nil {
		return nil, err
	}
	var tools any
	if opts.Tools != nil {
		tools = opts.Tools
	}
	vars := map[string]any{
		"messages":              list,
		"tools":                 tools,
		"add_generation_prompt": opts.AddGenerationPrompt,
		"bos_token":             opts.BOS,
		"eos_token":             opts.EOS,
	}
	for k, v := range opts.Vars {
		vars[k] = v
	}
	return vars, nil
}

// RenderJinja renders a Hugging Face chat template as transformers'
// apply_chat_template does (package jinja), in-process under
// jinja.DefaultLimits. Errors wrap ErrTemplate and carry the *jinja.Error
// (its line and message); a render past the limits also wraps
// ErrTemplateLimit.
func RenderJinja(template string, msgs []Message, opts ChatOptions) (string, error) {
	vars, err := ChatVars(msgs, opts)
	if err != nil {
		return "", err
	}
	tpl, err := jinja.Parse(template)
	if err == nil {
		var out string
		if out, err = tpl.Render(vars, jinja.Options{Now: opts.Now, Limits: jinja.DefaultLimits}); err == nil {
			return out, nil
		}
	}
	return "", TemplateErr(err)
}

// TemplateErr wraps an error of package jinja as RenderJinja returns it.
func TemplateErr(err error) error {
	if errors.Is(err, jinja.ErrLimit) {
		return fmt.Errorf("%w: %w: %w", ErrTemplate, ErrTemplateLimit, err)
	}
	return fmt.Errorf("%w: %w", ErrTemplate, err)
}

// RenderBuiltin renders msgs with a built-in format (not FormatJinja), the
// way llama.cpp's llama_chat_apply_template renders the same names.
func RenderBuiltin(format ChatFormat, msgs []Message, addGenerationPrompt bool) (string, error) {
	var b strings.Builder
	switch format {
	case FormatChatML:
		for _, m := range msgs {
			b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
		}
		if addGenerationPrompt {
			b.WriteString("<|im_start|>assistant\n")
		}
	case FormatLlama3:
		for _, m := range msgs {
			b.WriteString("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n" + strings.TrimSpace(m.Content) + "<|eot_id|>")
		}
		if addGenerationPrompt {
			b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
		}
	case FormatZephyr:
		for _, m := range msgs {
			b.WriteString("<|" + m.Role + "|>\n" + m.Content + "<|endoftext|>\n")
		}
		if addGenerationPrompt {
			b.WriteString("<|assistant|>\n")
		}
	case FormatLlama2:
		// The prompt opens a turn; BOS comes from tokenization.
		b.WriteString("[INST] ")
		inTurn := true
		for _, m := range msgs {
			if !inTurn {
				b.WriteString("[INST] ")
				inTurn = true
			}
			switch m.Role {
			case "system":
				b.WriteString("<<SYS>>\n" + m.Content + "\n<</SYS>>\n\n")
			case "user":
				b.WriteString(m.Content + " [/INST]")
			default:
				b.WriteString(m.Content + "</s>")
				inTurn = false
			}
		}
	default:
		return "", fmt.Errorf("%w: chat format %q", ErrUnsupported, format)
	}
	return b.String(), nil
}

// DetectFormat picks the built-in format closest to a Jinja template by
// the markers it contains (as llama.cpp detects them); ChatML when none
// matches or the template is empty.
func DetectFormat(template string) ChatFormat {
	has := func(s string) bool { return strings.Contains(template, s) }
	switch {
	case has("<|im_start|>"):
		return FormatChatML
	case strings.HasPrefix(template, "mistral") || has("[INST]"):
		return FormatLlama2
	case has("<|user|>") && has("<|endoftext|>"):
		return FormatZephyr
	case has("<|start_header_id|>") && has("<|end_header_id|>"):
		return FormatLlama3
	}
	return FormatChatML
}

// ApplyChat renders msgs into a prompt for this vocabulary: with the file's
// chat template when it has one, else as ChatML. opts.BOS and opts.EOS are set from the vocabulary. A
// template that fails is an error wrapping ErrTemplate, never a silent
// fall back to another format: the prompt a model was trained on matters.
//
// When Encode with AddSpecial adds BOS (AddBOS), a bos_token the template
// renders at the very start is removed, as llama.cpp's
// common_chat_templates_apply does, so that encoding the prompt with
// AddSpecial gives one BOS, not two.
//
// It renders in-process (RenderJinja): use it for trusted templates only;
// ApplyChatWith takes the renderer.
func (t *Tokenizer) ApplyChat(msgs []Message, opts ChatOptions) (prompt string, used ChatFormat, err error) {
	return t.ApplyChatWith(RenderJinja, msgs, opts)
}

// ApplyChatWith is ApplyChat with the file's template rendered by render.
// Its errors wrap ErrTemplate (ErrTemplateLimit for a template past a
// sandbox's limits) or a context's error (the caller gave up).
func (t *Tokenizer) ApplyChatWith(render JinjaRenderer, msgs []Message, opts ChatOptions) (prompt string, used ChatFormat, err error) {
	opts.BOS, opts.EOS = t.TokenText(t.bos), t.TokenText(t.eos)
	if t.chatTemplate != "" {
		out, err := render(t.chatTemplate, msgs, opts)
		if err != nil {
			if !errors.Is(err, ErrTemplate) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w: %w", ErrTemplate, err)
			}
			return "", FormatJinja, err
		}
		if t.AddBOS() && opts.BOS != "" {
			out = strings.TrimPrefix(out, opts.BOS)
		}
		return out, FormatJinja, nil
	}
	out, _ := RenderBuiltin(FormatChatML, msgs, opts.AddGenerationPrompt) // a built-in format: no error
	return out, FormatChatML, nil
}
