package server

import (
	"bytes"
	"encoding/json"
	"fmt"

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
