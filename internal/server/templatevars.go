package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/realizar-host/realizar-host/tokenizer"
)

// maxTemplateKwargs is the most members chat_template_kwargs may have:
// templates read a handful (enable_thinking, reasoning_effort, …).
const maxTemplateKwargs = 32

// enableThinking is the template variable of Qwen3's (and others')
// thinking switch, as llama-server passes it.
const enableThinking = "enable_thinking"

// serverVars are the template variables the server sets itself (the
// messages, tools, generation prompt, BOS and EOS: tokenizer.ChatVars'),
// which chat_template_kwargs may not replace.
var serverVars = func() map[string]bool {
	vars, _ := tokenizer.ChatVars(nil, tokenizer.ChatOptions{})
	out := map[string]bool{}
	for k := range vars {
		out[k] = true
	}
	return out
}()

// templateKwargs reads chat_template_kwargs: absent or null is none; else
// a JSON object of at most maxTemplateKwargs members, none of them a
// variable the server sets, and enable_thinking, when given, a boolean
// (as llama-server requires). Each member reaches the chat template as a
// variable. Anything else is a 400 naming the member.
func templateKwargs(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if !present(raw) {
		return nil, nil
	}
	var vars map[string]json.RawMessage
	if json.Unmarshal(raw, &vars) != nil || vars == nil {
		return nil, badRequest("chat_template_kwargs", "chat_template_kwargs must be a JSON object of template variables")
	}
	if len(vars) > maxTemplateKwargs {
		return nil, badRequest("chat_template_kwargs", "chat_template_kwargs holds %d variables; at most %d", len(vars), maxTemplateKwargs)
	}
	for k, v := range vars {
		param := "chat_template_kwargs." + k
		if serverVars[k] {
			return nil, badRequest(param, "%s is set by the server from the request; chat_template_kwargs may not replace it", k)
		}
		if k == enableThinking {
			if v := bytes.TrimSpace(v); !bytes.Equal(v, []byte("true")) && !bytes.Equal(v, []byte("false")) {
				return nil, badRequest(param, "%s must be a boolean, not %.40s", k, v)
			}
		}
	}
	return vars, nil
}

// withThinking is vars with enable_thinking set to on (a new map).
func withThinking(vars map[string]json.RawMessage, on bool) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(vars)+1)
	for k, v := range vars {
		out[k] = v
	}
	out[enableThinking] = json.RawMessage(fmt.Sprint(on))
	return out
}

// reasoningEfforts are OpenAI's reasoning_effort values.
var reasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// withReasoningEffort applies OpenAI's reasoning effort (chat's
// reasoning_effort, Responses' reasoning.effort) to the template variables
// as llama-server does: "none" turns thinking off (enable_thinking false),
// any other value reaches the template as reasoning_effort (gpt-oss's
// templates read it; others ignore it). nil leaves vars as they are. A
// value outside reasoningEfforts is a 400 naming param.
func withReasoningEffort(vars map[string]json.RawMessage, effort *string, param string) (map[string]json.RawMessage, error) {
	if effort == nil {
		return vars, nil
	}
	if !slices.Contains(reasoningEfforts, *effort) {
		return nil, badRequest(param, "%s %q is not one of %s", param, *effort, strings.Join(reasoningEfforts, ", "))
	}
	if *effort == "none" {
		out := withThinking(vars, false)
		delete(out, "reasoning_effort")
		return out, nil
	}
	out := make(map[string]json.RawMessage, len(vars)+1)
	for k, v := range vars {
		out[k] = v
	}
	out["reasoning_effort"] = jsonString(*effort)
	return out, nil
}
