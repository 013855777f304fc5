package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// Message is one chat turn.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
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
var ErrTemplate = errors.New("tokenizer: chat template")

// ErrTemplateLimit marks a template that a renderer stopped: it ran past
// its deadline, memory or output cap, or crashed the engine (package
// chatsandbox returns it; RenderJinja, in-process, cannot). Such errors
// also wrap ErrTemplate. ApplyChatWith does not fall back from it: the
// file is hostile or broken, and saying so beats a silent other format.
var ErrTemplateLimit = errors.New("chat template exceeded its limits")

// JinjaRenderer renders a chat template with the variables RenderJinja
// defines. RenderJinja is one (in-process, unbounded: for trusted
// templates); chatsandbox.Renderer.Func gives one that runs the same engine
// in a WebAssembly sandbox under a deadline and memory cap.
type JinjaRenderer func(template string, msgs []Message, opts ChatOptions) (string, error)

// ChatOptions are the variables a chat template sees besides the messages.
type ChatOptions struct {
	// AddGenerationPrompt ends the prompt with the assistant's header, so
	// the model answers (add_generation_prompt).
	AddGenerationPrompt bool
	// BOS and EOS are the bos_token and eos_token texts a template may use.
	BOS, EOS string
}

// RenderJinja renders a Hugging Face chat template (Jinja2) with the
// variables messages, add_generation_prompt, bos_token, eos_token and the
// function raise_exception. Errors (syntax, raise_exception, unsupported
// constructs) wrap ErrTemplate.
func RenderJinja(template string, msgs []Message, opts ChatOptions) (string, error) {
	tpl, err := gonja.FromString(template)
	if err != nil {
		return "", fmt.Errorf("%w: parse: %v", ErrTemplate, err)
	}
	list := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		list[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	ctx := exec.NewContext(map[string]any{
		"messages":              list,
		"add_generation_prompt": opts.AddGenerationPrompt,
		"bos_token":             opts.BOS,
		"eos_token":             opts.EOS,
		"raise_exception": func(msg string) (string, error) {
			return "", fmt.Errorf("raise_exception: %s", msg)
		},
	})
	out, err := tpl.ExecuteToString(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: render: %v", ErrTemplate, err)
	}
	return out, nil
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
// chat template when it has one and the Jinja engine renders it, else with
// the built-in format DetectFormat picks for it. It returns the format used
// and, when it fell back from the file's template, the error that caused
// the fallback (so callers can say so); err is then nil.
//
// When Encode with AddSpecial adds BOS (AddBOS), a bos_token the template
// renders at the very start is removed, as llama.cpp's
// common_chat_templates_apply does, so that encoding the prompt with
// AddSpecial gives one BOS, not two.
//
// It renders in-process (RenderJinja): use it for trusted templates only;
// ApplyChatWith takes the renderer.
func (t *Tokenizer) ApplyChat(msgs []Message, addGenerationPrompt bool) (prompt string, used ChatFormat, fallbackCause error) {
	prompt, used, fallbackCause, _ = t.ApplyChatWith(RenderJinja, msgs, addGenerationPrompt)
	return prompt, used, fallbackCause
}

// ApplyChatWith is ApplyChat with the file's template rendered by render.
// An error wrapping ErrTemplateLimit (from a sandboxed renderer) or a
// context's error (the caller gave up) is returned as err, with no fallback; other render errors fall back as in
// ApplyChat.
func (t *Tokenizer) ApplyChatWith(render JinjaRenderer, msgs []Message, addGenerationPrompt bool) (prompt string, used ChatFormat, fallbackCause, err error) {
	opts := ChatOptions{AddGenerationPrompt: addGenerationPrompt, BOS: t.TokenText(t.bos), EOS: t.TokenText(t.eos)}
	if t.chatTemplate != "" {
		out, err := render(t.chatTemplate, msgs, opts)
		if err == nil {
			if t.AddBOS() && opts.BOS != "" {
				out = strings.TrimPrefix(out, opts.BOS)
			}
			return out, FormatJinja, nil, nil
		}
		if errors.Is(err, ErrTemplateLimit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", FormatJinja, nil, err
		}
		fallbackCause = err
	}
	format := DetectFormat(t.chatTemplate)
	out, _ := RenderBuiltin(format, msgs, addGenerationPrompt) // DetectFormat only returns built-in formats
	return out, format, fallbackCause, nil
}
