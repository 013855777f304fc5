package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/realizar-host/realizar-host/internal/grammar"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/server/toolcall"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// chatTools is a chat request's tools, validated: what the template sees,
// the family the model writes its calls in and how they are constrained.
type chatTools struct {
	tools    []toolcall.Tool
	raw      json.RawMessage // the request's tools array, as the template sees it
	choice   toolcall.Choice
	parallel bool
	family   toolcall.Family
	fields   toolcall.Fields // the request's API's names (errors)
}

// active reports whether the turn may call tools (tools given and
// tool_choice not none); false for nil.
func (ct *chatTools) active() bool { return ct != nil && ct.choice.Mode != toolcall.None }

// readTools validates a chat request's tools, tool_choice and
// parallel_tool_calls for a model with template (its family); nil when the
// request has no tools. A bad field is a 400 naming it; a schema the
// grammar engine cannot enforce is unsupported_schema.
func readTools(req *chatRequest, template string) (*chatTools, error) {
	fields := toolcall.ChatFields
	if req.toolFields != nil {
		fields = *req.toolFields
	}
	tools, err := toolcall.ParseTools(req.Tools, fields)
	if err == nil {
		var choice toolcall.Choice
		if choice, err = toolcall.ParseChoice(req.ToolChoice, tools); err == nil {
			if len(tools) == 0 {
				return nil, nil
			}
			var buf bytes.Buffer
			_ = json.Compact(&buf, req.Tools) // valid: ParseTools read it
			ct := &chatTools{tools: tools, raw: buf.Bytes(), choice: choice, parallel: req.ParallelToolCalls == nil || *req.ParallelToolCalls,
				family: toolcall.Detect(template), fields: fields}
			return ct, nil
		}
	}
	var fe *toolcall.FieldError
	if errors.As(err, &fe) {
		e := badRequest(fe.Param, "%s", fe.Error())
		if errors.Is(err, toolcall.ErrSchema) {
			e.Code = "unsupported_schema"
		}
		return nil, e
	}
	return nil, err
}

// grammarConfig is the grammar processor's config for the turn: the
// family's calls over the tools' schemas, lazy (from the family's trigger
// on) under auto, from the first token under required or a named function.
// Tools whose grammar passes a cap (maxPluginConfigBytes of config, the
// grammar engine's compiled elements) are a 400 naming the tool at which
// it does: its schema's path, tools[i].function.parameters on chat
// completions (ct.fields).
func (ct *chatTools) grammarConfig() (json.RawMessage, error) {
	cfg, err := ct.constrain(ct.tools)
	if err == nil && len(cfg) <= maxPluginConfigBytes {
		return cfg, nil
	}
	if err != nil && !errors.Is(err, grammar.ErrTooLarge) {
		e := badRequest("tools", "tools: %v", err)
		e.Code = "unsupported_schema"
		return nil, e
	}
	why := fmt.Sprintf("%d bytes of the grammar processor's config, at most %d", len(cfg), maxPluginConfigBytes)
	if err != nil {
		why = err.Error()
	}
	// The first tool at which it passes: the named one, or the
	// shortest list of tools that does (each one adds rules).
	i := slices.IndexFunc(ct.tools, func(t toolcall.Tool) bool { return t.Name == ct.choice.Name })
	if ct.choice.Mode != toolcall.Named {
		i = sort.Search(len(ct.tools), func(j int) bool {
			cfg, err := ct.constrain(ct.tools[:j+1])
			return err != nil || len(cfg) > maxPluginConfigBytes
		})
	}
	param := fmt.Sprintf("tools[%d].%s", i, ct.fields.Schema)
	e := badRequest(param, "%s: with this tool the tools' grammar is past its cap (%s); give fewer or smaller tools", param, why)
	e.Code = "unsupported_schema"
	return nil, e
}

// constrain is the grammar processor's config for calls of tools.
func (ct *chatTools) constrain(tools []toolcall.Tool) (json.RawMessage, error) {
	c, err := toolcall.Constrain(ct.family, tools, ct.choice, ct.parallel)
	if err != nil {
		return nil, err
	}
	return plugins.Grammar{GBNF: c.GBNF, Triggers: c.Triggers}.Config(), nil
}

// withToolPrompt gives a Generic-family model whose template does not
// render tools (or that has no template) the tools and the call format,
// at the start of the first system or user message (templates that
// refuse a system role take it in the user's).
func (ct *chatTools) withToolPrompt(msgs []tokenizer.Message, template string) []tokenizer.Message {
	if !ct.active() || ct.family != toolcall.Generic || strings.Contains(template, "tools") {
		return msgs
	}
	prompt := toolcall.GenericPrompt(ct.tools)
	for i, m := range msgs {
		if m.Raw == nil && (m.Role == "system" || m.Role == "user") {
			out := append([]tokenizer.Message(nil), msgs...)
			out[i].Content = prompt + "\n\n" + m.Content
			return out
		}
	}
	return append([]tokenizer.Message{{Role: "system", Content: prompt}}, msgs...)
}

// callIDChars are the characters of a call id.
const callIDChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newCallID is a fresh call id: nine letters and digits for the Mistral
// families (their templates refuse any other id fed back), "call_" and 24
// for the others.
func newCallID(f toolcall.Family) string {
	n, prefix := 24, "call_"
	if f == toolcall.Mistral || f == toolcall.MistralArgs {
		n, prefix = 9, ""
	}
	b := []byte(prefix)
	for range n {
		b = append(b, callIDChars[rand.IntN(len(callIDChars))])
	}
	return string(b)
}

// chatMessages converts a request's messages for the template: content
// flattened to its text; an assistant message with tool_calls and a tool
// message become the objects transformers passes (Message.Raw): the calls
// with their arguments as JSON values, not strings, the tool message with
// its tool_call_id; an assistant message with calls and null content has
// content "" (llama.cpp's workaround: Qwen3's template, among others, fails
// on None). With polyfill (a template that renders no tool_calls)
// they become text instead: the assistant's content ends with the calls as
// the Generic family writes them, {"tool_calls": [{"name", "arguments"}]},
// and a tool message is a user message {"tool_results": [{"tool_call_id",
// "content"}]}. A bad field is a 400 naming it; so is a tool message
// whose tool_call_id is no call id of an earlier assistant message.
func chatMessages(in []chatMessage, polyfill bool, checkBytes func(total int) error) ([]tokenizer.Message, error) {
	msgs := make([]tokenizer.Message, len(in))
	callIDs := map[string]bool{} // the ids of the assistant messages' calls so far
	total := 0
	for i, m := range in {
		param := fmt.Sprintf("messages[%d]", i)
		text, err := messageText(m.Content)
		if err != nil {
			return nil, badRequest(param+".content", "%s.content: %v", param, err)
		}
		total += len(text)
		if err := checkBytes(total); err != nil {
			return nil, err
		}
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		switch role {
		case "system", "user":
		case "assistant", "tool":
		default:
			return nil, badRequest(param+".role", "role %q is not supported (system, developer, user, assistant, tool)", m.Role)
		}
		msgs[i] = tokenizer.Message{Role: role, Content: text}
		if present(m.ToolCalls) && role != "assistant" {
			return nil, badRequest(param+".tool_calls", "only an assistant message has tool_calls")
		}
		if role != "tool" && !present(m.ToolCalls) {
			continue
		}
		raw, err := rawMessage(m, role, text, param)
		if err != nil {
			return nil, err
		}
		var v struct {
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		}
		_ = json.Unmarshal(raw, &v) // rawMessage wrote it
		for _, c := range v.ToolCalls {
			callIDs[c.ID] = true
		}
		if role == "tool" && !callIDs[v.ToolCallID] {
			return nil, badRequest(param+".tool_call_id", "tool_call_id %q is not the id of a call in an earlier assistant message's tool_calls", v.ToolCallID)
		}
		if !polyfill {
			msgs[i].Raw = raw
			continue
		}
		var b strings.Builder
		if role == "tool" {
			id, _ := json.Marshal(v.ToolCallID)
			content, _ := json.Marshal(text)
			msgs[i] = tokenizer.Message{Role: "user", Content: `{"tool_results": [{"tool_call_id": ` + string(id) + `, "content": ` + string(content) + `}]}`}
			continue
		}
		if text != "" {
			b.WriteString(text + "\n")
		}
		b.WriteString(`{"tool_calls": [`)
		for j, c := range v.ToolCalls {
			if j > 0 {
				b.WriteString(", ")
			}
			name, _ := json.Marshal(c.Function.Name)
			b.WriteString(`{"name": ` + string(name) + `, "arguments": ` + string(c.Function.Arguments) + `}`)
		}
		b.WriteString("]}")
		msgs[i].Content = b.String()
	}
	return msgs, nil
}

// polyfills reports whether a template's history of calls and tool
// results is given as text (chatMessages): a Generic-family template
// that renders no tool_calls.
func polyfills(template string) bool {
	return toolcall.Detect(template) == toolcall.Generic && !strings.Contains(template, "tool_calls")
}

// rawMessage is m as the JSON object a template sees.
func rawMessage(m chatMessage, role, text, param string) (json.RawMessage, error) {
	var b bytes.Buffer
	str := func(s string) { v, _ := json.Marshal(s); b.Write(v) }
	b.WriteString(`{"role":`)
	str(role)
	b.WriteString(`,"content":`)
	if present(m.Content) || present(m.ToolCalls) {
		// An assistant's calls without content have content "", as
		// llama.cpp gives them: Qwen3's template, among others, fails on
		// None.
		str(text)
	} else {
		b.WriteString("null")
	}
	if m.Name != "" {
		b.WriteString(`,"name":`)
		str(m.Name)
	}
	if role == "tool" {
		if m.ToolCallID == nil {
			return nil, badRequest(param+".tool_call_id", "a tool message needs the tool_call_id it answers")
		}
		b.WriteString(`,"tool_call_id":`)
		str(*m.ToolCallID)
	}
	if present(m.ToolCalls) {
		var calls []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function *struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		if err := json.Unmarshal(m.ToolCalls, &calls); err != nil {
			return nil, badRequest(param+".tool_calls", "%s.tool_calls must be an array of {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}", param)
		}
		b.WriteString(`,"tool_calls":[`)
		for j, c := range calls {
			p := fmt.Sprintf("%s.tool_calls[%d]", param, j)
			if c.Function == nil || c.Type != "" && c.Type != "function" {
				return nil, badRequest(p, "a tool call is {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}")
			}
			args, err := callArguments(c.Function.Arguments)
			if err != nil {
				return nil, badRequest(p+".function.arguments", "%v", err)
			}
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"id":`)
			str(c.ID)
			b.WriteString(`,"type":"function","function":{"name":`)
			str(c.Function.Name)
			b.WriteString(`,"arguments":`)
			b.Write(args)
			b.WriteString(`}}`)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// callArguments is a call's arguments as the JSON value a template sees:
// OpenAI's JSON string decoded (an object given as such is taken as is).
func callArguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return json.RawMessage("{}"), nil
	}
	if raw[0] != '"' {
		return raw, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if !json.Valid([]byte(s)) {
		return nil, errors.New("arguments must be a JSON text")
	}
	return json.RawMessage(s), nil
}

// turnPieces renders a request's turn as llama-server renders content:
// control tokens as nothing, except, in a turn whose tool calls are
// parsed, the family's markers (toolcall.Family.Markers, llama.cpp's
// preserved tokens), which the parser must see even where the vocabulary
// makes them control tokens (Llama 3.1's <|python_tag|>, Mistral's
// [TOOL_CALLS]).
func (s *Server) turnPieces(ct *chatTools) *tokenizer.Renderer {
	var opts tokenizer.RenderOptions
	if ct.active() {
		opts.Preserve = ct.family.Markers()
	}
	return s.model.Tokenizer.Renderer(opts)
}

// toolMessage is the assistant message of a turn that may call tools:
// the text parsed as the family writes calls, each call given an id.
func toolMessage(ct *chatTools, text string) *chatMessageOut {
	m := toolcall.Parse(ct.family, text)
	out := &chatMessageOut{Role: "assistant", Content: ptr(m.Content)}
	for _, c := range m.Calls {
		out.ToolCalls = append(out.ToolCalls, toolCallOut{ID: newCallID(ct.family), Type: "function",
			Function: toolFunctionOut{Name: c.Name, Arguments: c.Arguments}})
	}
	if len(out.ToolCalls) > 0 && m.Content == "" {
		out.Content = nil
	}
	return out
}

// toolChunkDelta is the streamed delta of one toolcall.Delta.
func toolChunkDelta(d toolcall.Delta) *chatOut {
	if d.Call == nil {
		return &chatOut{Content: ptr(d.Content)}
	}
	c := toolCallDelta{Index: d.Call.Index, Function: toolFunctionDelta{Arguments: d.Call.Arguments}}
	if d.Call.First {
		c.ID, c.Type, c.Function.Name = d.Call.ID, "function", d.Call.Name
	}
	return &chatOut{ToolCalls: []toolCallDelta{c}}
}
