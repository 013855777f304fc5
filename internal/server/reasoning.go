package server

import (
	"strings"
	"unicode"
)

// The reasoning split: a thinking model's <think>…</think> block, at the
// start of its answer, is presented apart from the answer —
// reasoning_content on chat, thinking blocks on Messages, reasoning items
// on Responses — as llama-server's reasoning_format "deepseek" does. The
// split is presentation only: stop policies and processors see the whole
// generated text.

// The tags of a reasoning block (DeepSeek-R1, Qwen3, QwQ).
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// reasoningFormats are the reasoning_format values taken (llama-server's
// names): "auto" (the default) splits for a template that thinks (it
// mentions thinkClose), "deepseek" always, "none" never.
var reasoningFormats = []string{"auto", "deepseek", "none"}

// thinkSplit splits a turn's text, given as it is generated, into
// reasoning and content: a block opened by thinkOpen at the start of the
// text (after space), or by the prompt (inside), and closed by thinkClose;
// the space after the close is dropped. A possible tag's prefix is held
// back until it cannot be one. The zero value starts outside a block.
type thinkSplit struct {
	in, done bool   // inside the block; past it (or past the start)
	trim     bool   // drop the space that follows the close
	held     string // text not yet given out
}

// feed adds text and returns the reasoning and content it releases; final
// releases what was held back.
func (t *thinkSplit) feed(text string, final bool) (reasoning, content string) {
	buf := t.held + text
	t.held = ""
	for buf != "" {
		switch {
		case t.in:
			if i := strings.Index(buf, thinkClose); i >= 0 {
				reasoning += buf[:i]
				buf = buf[i+len(thinkClose):]
				t.in, t.done, t.trim = false, true, true
				continue
			}
			keep := 0
			if !final {
				keep = heldTag(buf, thinkClose)
			}
			reasoning += buf[:len(buf)-keep]
			t.held = buf[len(buf)-keep:]
			return reasoning, content
		case !t.done:
			rest := strings.TrimLeftFunc(buf, unicode.IsSpace)
			switch {
			case strings.HasPrefix(rest, thinkOpen):
				t.in = true
				buf = rest[len(thinkOpen):]
				continue
			case !final && strings.HasPrefix(thinkOpen, rest):
				t.held = buf // space, or the open tag's prefix
				return reasoning, content
			}
			t.done = true
		default:
			if t.trim {
				buf = strings.TrimLeftFunc(buf, unicode.IsSpace)
				if buf == "" && !final {
					return reasoning, content
				}
				t.trim = false
			}
			content += buf
			buf = ""
		}
	}
	return reasoning, content
}

// heldTag is the length of the longest suffix of s that is a proper
// prefix of tag.
func heldTag(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}

// splitsReasoning says whether a request with reasoning_format format
// (validated; "" is auto) on a model with template splits its reasoning.
func splitsReasoning(format, template string) bool {
	switch format {
	case "deepseek":
		return true
	case "none":
		return false
	}
	return strings.Contains(template, thinkClose)
}

// newThinkSplit is the split for a prompt (rendered) that may open the
// block itself, as Qwen3's and DeepSeek-R1's generation prompts do.
func newThinkSplit(prompt string) *thinkSplit {
	return &thinkSplit{in: strings.HasSuffix(strings.TrimRightFunc(prompt, unicode.IsSpace), thinkOpen)}
}
