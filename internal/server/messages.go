package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/server/toolcall"
	"github.com/realizar-host/realizar-host/internal/serving"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// Anthropic's Messages API (POST /v1/messages): the request is
// translated to a chat request (prepareChat) and runs through the same
// pipeline; only the response and error shapes are Anthropic's.

// messagesRequest is POST /v1/messages and /v1/messages/count_tokens.
// The sampling fields Anthropic's API shares with chat (max_tokens,
// temperature, top_p, top_k, stream) and this server's extensions
// (realizar, seed, the llama.cpp sampler keys, grammar) are chat's
// samplingFields; tools and tool_choice shadow chat's with Anthropic's
// shapes.
type messagesRequest struct {
	samplingFields
	// System is a string or an array of text blocks.
	System   json.RawMessage    `json:"system"`
	Messages []anthropicMessage `json:"messages"`
	// StopSequences end the turn where the text would hold one of them
	// (stop_reason "stop_sequence"); chat's stop limits apply.
	StopSequences []string `json:"stop_sequences"`
	// Tools are [{"name", "description", "input_schema"}].
	Tools json.RawMessage `json:"tools"`
	// ToolChoice is {"type": "auto" | "any" | "none" | "tool", "name",
	// "disable_parallel_tool_use"}.
	ToolChoice json.RawMessage `json:"tool_choice"`
	// Metadata ({"user_id"}) is accepted and not used.
	Metadata json.RawMessage `json:"metadata"`
	// Thinking is {"type": "enabled", "budget_tokens": N} or {"type":
	// "disabled"}: the chat template's enable_thinking (anthropicThinking).
	Thinking json.RawMessage `json:"thinking"`
	// ChatTemplateKwargs is chat's llama-server extension, refused here
	// rather than ignored: the Messages API's switch is thinking.
	ChatTemplateKwargs json.RawMessage `json:"chat_template_kwargs"`
	// OutputFormat is Anthropic's structured output, {"type":
	// "json_schema", "schema": S}: output valid against S, as chat's
	// response_format json_schema (anthropicOutputFormat).
	OutputFormat json.RawMessage `json:"output_format"`
}

// anthropicMessage is one message: content is a string or an array of
// blocks.
type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anthropicBlock is a content block of a request: text, tool_use (an
// assistant's call), tool_result (a user's answer to one), or thinking
// (an assistant's, dropped from the history as Anthropic drops it).
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// handleMessages is POST /v1/messages.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	return s.generate(w, r, t, shapeMessages, func(body []byte) (prepared, error) { return s.decodeMessages(body, true) })
}

// decodeMessages decodes a Messages request and validates it as the chat
// request it translates to. max_tokens is required when needMax (a
// generation; count_tokens has none).
func (s *Server) decodeMessages(body []byte, needMax bool) (prepared, error) {
	var req messagesRequest
	if err := decodeBody(body, &req); err != nil {
		return prepared{}, err
	}
	if needMax && req.MaxTokens == nil {
		return prepared{}, badRequest("max_tokens", "max_tokens is required")
	}
	if req.MaxCompletionTokens != nil {
		return prepared{}, unsupported("max_completion_tokens")
	}
	if present(req.ChatTemplateKwargs) {
		return prepared{}, badRequest("chat_template_kwargs", "chat_template_kwargs is chat completions' field; the Messages API sets the template's thinking with thinking: {\"type\": \"enabled\", \"budget_tokens\": N} or {\"type\": \"disabled\"}")
	}
	if len(req.Messages) == 0 {
		return prepared{}, badRequest("messages", "messages is empty")
	}
	chat := chatRequest{samplingFields: req.samplingFields}
	chat.Stop = append(append(stopField(nil), req.Stop...), req.StopSequences...)
	system, err := anthropicText(req.System, "system")
	if err != nil {
		return prepared{}, err
	}
	if system != "" {
		chat.Messages = append(chat.Messages, chatMessage{Role: "system", Content: jsonString(system)})
	}
	for i, m := range req.Messages {
		msgs, err := anthropicToChat(m, fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return prepared{}, err
		}
		chat.Messages = append(chat.Messages, msgs...)
	}
	if chat.Tools, err = anthropicTools(req.Tools); err != nil {
		return prepared{}, err
	}
	chat.toolFields = &toolcall.MessagesFields
	if chat.ToolChoice, chat.ParallelToolCalls, err = anthropicToolChoice(req.ToolChoice, req.Tools); err != nil {
		return prepared{}, err
	}
	thinking, err := anthropicThinking(req.Thinking, req.MaxTokens)
	if err != nil {
		return prepared{}, err
	}
	if present(req.OutputFormat) {
		if present(req.ResponseFormat) {
			return prepared{}, badRequest("output_format", "give one of output_format and response_format (chat's field)")
		}
		if chat.ResponseFormat, err = anthropicOutputFormat(req.OutputFormat); err != nil {
			return prepared{}, err
		}
		chat.formatParam = "output_format" // chat's errors and warnings about ResponseFormat name the field the client sent
	}
	p, err := s.prepareChat(&chat)
	if err != nil {
		return p, err
	}
	if thinking != nil {
		p.templateVars = withThinking(p.templateVars, *thinking)
		if req.ReasoningFormat == "" {
			// Anthropic's semantics: thinking blocks exactly when thinking
			// is on, whatever the template says (reasoning_format, when
			// given, still decides).
			p.think = *thinking
		}
	}
	p.stopSequences = req.StopSequences
	return p, nil
}

// Anthropic's bound on thinking.budget_tokens: at least 1024, and under
// max_tokens.
const minThinkingBudget = 1024

// anthropicOutputFormat translates output_format, {"type": "json_schema",
// "schema": S}, to chat's response_format json_schema. Another type, or
// no schema, is a 400 naming the field.
func anthropicOutputFormat(raw json.RawMessage) (json.RawMessage, error) {
	var f struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil, badRequest("output_format", `output_format is {"type": "json_schema", "schema": {...}}`)
	}
	if f.Type != "json_schema" {
		return nil, badRequest("output_format.type", "output_format type %q is not json_schema", f.Type)
	}
	if !present(f.Schema) {
		return nil, badRequest("output_format.schema", "output_format json_schema needs its schema")
	}
	b, _ := json.Marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "output", "schema": f.Schema}})
	return b, nil
}

// anthropicThinking reads the thinking parameter: absent or null leaves the
// template's default (nil); {"type": "enabled", "budget_tokens": N} turns
// thinking on (true), {"type": "disabled"} off (false), as the chat
// template's enable_thinking and the reasoning split (a <think> block is a
// thinking block when on, text when off, unless reasoning_format says
// otherwise). N must be an integer of at least
// minThinkingBudget and under maxTokens, as Anthropic requires; the
// budget itself is not enforced (the thinking block ends when the model
// ends it, or at max_tokens). Anything else is a 400 naming the field.
func anthropicThinking(raw json.RawMessage, maxTokens *int) (*bool, error) {
	if !present(raw) {
		return nil, nil
	}
	var th struct {
		Type         string          `json:"type"`
		BudgetTokens json.RawMessage `json:"budget_tokens"`
	}
	if json.Unmarshal(raw, &th) != nil {
		return nil, badRequest("thinking", `thinking must be {"type": "enabled", "budget_tokens": N} or {"type": "disabled"}`)
	}
	on := false
	switch th.Type {
	case "enabled":
		var budget int
		if json.Unmarshal(th.BudgetTokens, &budget) != nil {
			return nil, badRequest("thinking.budget_tokens", "thinking.budget_tokens is required with type enabled, an integer")
		}
		if budget < minThinkingBudget {
			return nil, badRequest("thinking.budget_tokens", "thinking.budget_tokens must be >= %d, not %d", minThinkingBudget, budget)
		}
		if maxTokens != nil && budget >= *maxTokens {
			return nil, badRequest("thinking.budget_tokens", "thinking.budget_tokens (%d) must be less than max_tokens (%d)", budget, *maxTokens)
		}
		on = true
	case "disabled":
		if present(th.BudgetTokens) {
			return nil, badRequest("thinking.budget_tokens", "thinking.budget_tokens goes with type enabled only")
		}
	default:
		return nil, badRequest("thinking.type", "thinking.type %q is not enabled or disabled", th.Type)
	}
	return &on, nil
}

// jsonString is s as a JSON string.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// anthropicText is a string or an array of text blocks as one text.
func anthropicText(raw json.RawMessage, param string) (string, error) {
	if !present(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []anthropicBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return "", badRequest(param, "%s must be a string or an array of text blocks", param)
	}
	var b strings.Builder
	for j, bl := range blocks {
		if bl.Type != "text" {
			return "", badRequest(fmt.Sprintf("%s[%d].type", param, j), "block type %q is not supported here (text only)", bl.Type)
		}
		b.WriteString(bl.Text)
	}
	return b.String(), nil
}

// anthropicToChat translates one message to chat messages: a user's text
// to a user message and its tool_result blocks to tool messages (before
// the text, in the order given); an assistant's text and tool_use blocks
// to one assistant message with tool_calls.
func anthropicToChat(m anthropicMessage, param string) ([]chatMessage, error) {
	if m.Role != "user" && m.Role != "assistant" {
		return nil, badRequest(param+".role", "role %q is not user or assistant (the system prompt is the system field)", m.Role)
	}
	var blocks []anthropicBlock
	var s string
	switch {
	case json.Unmarshal(m.Content, &s) == nil:
		return []chatMessage{{Role: m.Role, Content: jsonString(s)}}, nil
	case json.Unmarshal(m.Content, &blocks) != nil:
		return nil, badRequest(param+".content", "%s.content must be a string or an array of content blocks", param)
	}
	var out []chatMessage
	var text strings.Builder
	var calls []toolCallOut
	for j, b := range blocks {
		bp := fmt.Sprintf("%s.content[%d]", param, j)
		switch {
		case b.Type == "text":
			text.WriteString(b.Text)
		case b.Type == "thinking" || b.Type == "redacted_thinking":
			if m.Role != "assistant" {
				return nil, badRequest(bp+".type", "only an assistant message has %s blocks", b.Type)
			}
		case b.Type == "tool_use" && m.Role == "assistant":
			input := b.Input
			if !present(input) {
				input = json.RawMessage("{}")
			}
			if !json.Valid(input) || bytes.TrimSpace(input)[0] != '{' {
				return nil, badRequest(bp+".input", "a tool_use block's input must be a JSON object")
			}
			calls = append(calls, toolCallOut{ID: b.ID, Type: "function", Function: toolFunctionOut{Name: b.Name, Arguments: string(input)}})
		case b.Type == "tool_result" && m.Role == "user":
			result, err := anthropicText(b.Content, bp+".content")
			if err != nil {
				return nil, err
			}
			if b.IsError {
				result = "Error: " + result
			}
			id := b.ToolUseID
			out = append(out, chatMessage{Role: "tool", Content: jsonString(result), ToolCallID: &id})
		default:
			return nil, badRequest(bp+".type", "a %s message's block type %q is not supported (text, tool_use and thinking for the assistant, text and tool_result for the user)", m.Role, b.Type)
		}
	}
	if m.Role == "user" {
		if text.Len() > 0 || len(out) == 0 {
			out = append(out, chatMessage{Role: "user", Content: jsonString(text.String())})
		}
		return out, nil
	}
	msg := chatMessage{Role: "assistant", Content: jsonString(text.String())}
	if len(calls) > 0 {
		msg.ToolCalls, _ = json.Marshal(calls)
	}
	return []chatMessage{msg}, nil
}

// anthropicTools translates tools [{"name", "description",
// "input_schema"}] to chat's function tools.
func anthropicTools(raw json.RawMessage) (json.RawMessage, error) {
	if !present(raw) {
		return nil, nil
	}
	var tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if json.Unmarshal(raw, &tools) != nil {
		return nil, badRequest("tools", `tools must be an array of {"name", "description", "input_schema"}`)
	}
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	out := make([]tool, len(tools))
	for i, t := range tools {
		if t.Type != "" && t.Type != "custom" {
			return nil, badRequest(fmt.Sprintf("tools[%d].type", i), "tool type %q is not supported (client tools only)", t.Type)
		}
		out[i] = tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}}
	}
	b, _ := json.Marshal(out)
	return b, nil
}

// anthropicToolChoice translates tool_choice to chat's: auto, any
// (required), tool (a named function) and none; disable_parallel_tool_use
// is parallel_tool_calls false. A tool choice's name must be one of
// tools' (read by anthropicTools), named as tool_choice.name, not as the
// chat request's tool_choice.function.name.
func anthropicToolChoice(raw, tools json.RawMessage) (json.RawMessage, *bool, error) {
	if !present(raw) {
		return nil, nil, nil
	}
	var c struct {
		Type                   string `json:"type"`
		Name                   string `json:"name"`
		DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return nil, nil, badRequest("tool_choice", `tool_choice is {"type": "auto" | "any" | "tool" | "none"}`)
	}
	parallel := ptr(!c.DisableParallelToolUse)
	switch c.Type {
	case "auto":
		return jsonString("auto"), parallel, nil
	case "any":
		return jsonString("required"), parallel, nil
	case "none":
		return jsonString("none"), parallel, nil
	case "tool":
		var named []struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(tools, &named) // anthropicTools read them
		known := false
		for _, t := range named {
			known = known || t.Name == c.Name
		}
		if !known {
			return nil, nil, badRequest("tool_choice.name", "tool_choice.name %q is not the name of one of tools", c.Name)
		}
		b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": c.Name}})
		return b, parallel, nil
	}
	return nil, nil, badRequest("tool_choice.type", "tool_choice type %q is not auto, any, tool or none", c.Type)
}

// handleCountTokens is POST /v1/messages/count_tokens: the prompt's tokens
// as the template renders the request, {"input_tokens"}. It is admitted
// and prepared as a generation is (the template is the costly part), and
// generates nothing.
func (s *Server) handleCountTokens(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	done, err := t.Admit(time.Now())
	if err != nil {
		return err
	}
	defer done()
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), prepareTimeout)
	defer cancel()
	release, err := s.prep.acquire(ctx, t.Name)
	if err != nil {
		return prepareError(ctx, err)
	}
	defer release()
	p, err := s.decodeMessages(body, false)
	if err != nil {
		return err
	}
	if err := s.tokenizePrompt(ctx, &p); err != nil {
		return prepareError(ctx, err)
	}
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": len(p.prompt)})
	return nil
}

// Anthropic's error types by HTTP status.
var anthropicErrorTypes = map[int]string{
	http.StatusBadRequest:            "invalid_request_error",
	http.StatusUnauthorized:          "authentication_error",
	http.StatusForbidden:             "permission_error",
	http.StatusNotFound:              "not_found_error",
	http.StatusRequestEntityTooLarge: "request_too_large",
	http.StatusTooManyRequests:       "rate_limit_error",
	http.StatusServiceUnavailable:    "overloaded_error",
}

// anthropicError is an error's body in Anthropic's shape: {"type":
// "error", "error": {"type", "message"}}; the type follows the status
// ("api_error" for any other).
type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func toAnthropicError(e *APIError) anthropicError {
	var a anthropicError
	a.Type = "error"
	a.Error.Type = anthropicErrorTypes[e.Status]
	if a.Error.Type == "" {
		a.Error.Type = "api_error"
	}
	a.Error.Message = e.Message
	if e.Param != "" && !strings.Contains(e.Message, e.Param) {
		a.Error.Message = e.Param + ": " + e.Message
	}
	return a
}

// writeAnthropicError sends e in Anthropic's shape (authedAs).
func writeAnthropicError(w http.ResponseWriter, e *APIError) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((e.RetryAfter+time.Second-1)/time.Second))))
	}
	writeJSON(w, e.Status, toAnthropicError(e))
}

// anthropicMessageOut is a Messages response (and message_start's
// message, with empty content).
type anthropicMessageOut struct {
	ID           string              `json:"id"`
	Type         string              `json:"type"`
	Role         string              `json:"role"`
	Model        string              `json:"model"`
	Content      []anthropicBlockOut `json:"content"`
	StopReason   *string             `json:"stop_reason"`
	StopSequence *string             `json:"stop_sequence"`
	Usage        anthropicUsage      `json:"usage"`
	Realizar     *realizarResponse   `json:"realizar,omitempty"`
}

// anthropicBlockOut is a response's content block: thinking (the
// reasoning split, its signature empty), text or tool_use.
type anthropicBlockOut struct {
	Type      string          `json:"type"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// anthropicStop is a turn's stop_reason and stop_sequence: max_tokens when
// the budget or the context ran out, tool_use when it called a tool,
// stop_sequence when one of the request's stop_sequences ended it (the
// first of them to appear in the generated tokens' text after the
// answer), else end_turn.
func (rs *responder) anthropicStop(t engine.Turn, calls int) (string, *string) {
	switch {
	case t.Stop == engine.StopMaxTokens || t.Stop == engine.StopContext:
		return "max_tokens", nil
	case calls > 0:
		return "tool_use", nil
	case t.Stop == engine.StopByPolicy && len(rs.p.stopSequences) > 0:
		var full strings.Builder
		for _, id := range t.Tokens[len(t.Tokens)-t.Generated:] {
			full.Write(rs.pieces.Piece(id))
		}
		rest, best, at := full.String(), "", -1
		rest = rest[min(len(t.Text), len(rest)):]
		for _, st := range rs.p.stopSequences {
			if i := strings.Index(rest, st); i >= 0 && (at < 0 || i < at) {
				best, at = st, i
			}
		}
		if at >= 0 {
			return "stop_sequence", &best
		}
	}
	return "end_turn", nil
}

// anthropicCallID is a tool_use id: Anthropic's "toolu_" prefix on the
// family's id (the Mistral families' nine characters stay as they are:
// their templates refuse any other id fed back).
func anthropicCallID(f toolcall.Family) string {
	id := newCallID(f)
	if rest, ok := strings.CutPrefix(id, "call_"); ok {
		return "toolu_" + rest
	}
	return id
}

// messagesWhole writes the turn's Message.
func (rs *responder) messagesWhole(turn *serving.Turn) error {
	res, err := rs.result(turn)
	rs.timingHeaders(res)
	if err != nil {
		return err
	}
	t := res.Turn
	out := anthropicMessageOut{ID: rs.id, Type: "message", Role: "assistant", Model: rs.s.model.ID,
		Content: []anthropicBlockOut{}, Usage: anthropicUsage{InputTokens: len(rs.p.prompt), OutputTokens: t.Generated},
		Realizar: realizarOf(res, rs.pol)}
	reasoning, text := rs.split(string(t.Text))
	calls := []toolcall.Call(nil)
	if reasoning != "" {
		out.Content = append(out.Content, anthropicBlockOut{Type: "thinking", Thinking: &reasoning, Signature: ptr("")})
	}
	if rs.p.tools.active() {
		m := toolcall.Parse(rs.p.tools.family, text)
		text, calls = m.Content, m.Calls
	}
	if text != "" || len(calls) == 0 && reasoning == "" {
		out.Content = append(out.Content, anthropicBlockOut{Type: "text", Text: &text})
	}
	for _, c := range calls {
		out.Content = append(out.Content, anthropicBlockOut{Type: "tool_use", ID: anthropicCallID(rs.p.tools.family), Name: c.Name,
			Input: json.RawMessage(c.Arguments)})
	}
	reason, seq := rs.anthropicStop(t, len(calls))
	out.StopReason, out.StopSequence = &reason, seq
	_ = http.NewResponseController(rs.w).SetWriteDeadline(time.Now().Add(rs.s.cfg.WriteTimeout))
	writeJSON(rs.w, http.StatusOK, out)
	return nil
}

// anthropicStream writes Anthropic's event sequence: message_start, then
// per content block content_block_start, its deltas and
// content_block_stop, then message_delta (stop_reason, usage) and
// message_stop. A text block is opened at the first text, a tool_use
// block at each call.
type anthropicStream struct {
	st    *sse
	open  bool   // a block is open
	kind  string // the open block's type
	index int    // the open block's index; the next one's when !open
}

func (a *anthropicStream) send(name string, v map[string]any) error {
	v["type"] = name
	return a.st.event(name, v)
}

// start opens a block of kind (closing the open one).
func (a *anthropicStream) start(block map[string]any) error {
	if err := a.stop(); err != nil {
		return err
	}
	a.open, a.kind = true, block["type"].(string)
	return a.send("content_block_start", map[string]any{"index": a.index, "content_block": block})
}

// stop closes the open block, if any.
func (a *anthropicStream) stop() error {
	if !a.open {
		return nil
	}
	a.open = false
	a.index++
	return a.send("content_block_stop", map[string]any{"index": a.index - 1})
}

// text streams content text, in a text block.
func (a *anthropicStream) text(s string) error {
	if s == "" {
		return nil
	}
	if !a.open || a.kind != "text" {
		if err := a.start(map[string]any{"type": "text", "text": ""}); err != nil {
			return err
		}
	}
	return a.send("content_block_delta", map[string]any{"index": a.index, "delta": map[string]string{"type": "text_delta", "text": s}})
}

// thinking streams reasoning, in a thinking block.
func (a *anthropicStream) thinking(s string) error {
	if s == "" {
		return nil
	}
	if !a.open || a.kind != "thinking" {
		if err := a.start(map[string]any{"type": "thinking", "thinking": "", "signature": ""}); err != nil {
			return err
		}
	}
	return a.send("content_block_delta", map[string]any{"index": a.index, "delta": map[string]string{"type": "thinking_delta", "thinking": s}})
}

// answer streams a piece of the turn's text: its reasoning (when split)
// as thinking, the rest as text or, in a tool turn, calls.
func (a *anthropicStream) answer(think *thinkSplit, calls *toolcall.Stream, text string, final bool) error {
	if think != nil {
		var reasoning string
		reasoning, text = think.feed(text, final)
		if err := a.thinking(reasoning); err != nil {
			return err
		}
	}
	if calls != nil {
		return a.deltas(calls.Feed(text))
	}
	return a.text(text)
}

// deltas streams a tool turn's deltas: content as text, each call as a
// tool_use block whose input arrives as input_json_delta parts.
func (a *anthropicStream) deltas(ds []toolcall.Delta) error {
	for _, d := range ds {
		if d.Call == nil {
			if err := a.text(d.Content); err != nil {
				return err
			}
			continue
		}
		if d.Call.First {
			if err := a.start(map[string]any{"type": "tool_use", "id": d.Call.ID, "name": d.Call.Name, "input": map[string]any{}}); err != nil {
				return err
			}
		}
		if d.Call.Arguments != "" {
			if err := a.send("content_block_delta", map[string]any{"index": a.index,
				"delta": map[string]string{"type": "input_json_delta", "partial_json": d.Call.Arguments}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// messagesStream writes the turn as Anthropic's stream. An error after
// the stream began is an error event.
func (rs *responder) messagesStream(turn *serving.Turn) error {
	a := &anthropicStream{st: newSSE(rs.w, rs.s.cfg.WriteTimeout)}
	var calls *toolcall.Stream
	if rs.p.tools.active() {
		fam := rs.p.tools.family
		calls = toolcall.NewStream(fam, func() string { return anthropicCallID(fam) })
	}
	begin := func() error {
		if a.st.started {
			return nil
		}
		msg := anthropicMessageOut{ID: rs.id, Type: "message", Role: "assistant", Model: rs.s.model.ID,
			Content: []anthropicBlockOut{}, Usage: anthropicUsage{InputTokens: len(rs.p.prompt)}}
		if err := a.send("message_start", map[string]any{"message": msg}); err != nil {
			return err
		}
		return a.send("ping", map[string]any{})
	}
	if err := forEachText(turn, func(text string) error {
		if err := begin(); err != nil {
			return err
		}
		return a.answer(rs.think, calls, text, false)
	}); err != nil {
		return err
	}
	res, err := rs.result(turn)
	if !a.st.started {
		rs.timingHeaders(res)
	}
	if err != nil {
		if !a.st.started {
			return err
		}
		_ = a.st.event("error", toAnthropicError(clientError(rs.ctx, err)))
		return errors.Join(errWritten, err)
	}
	_ = begin()
	if rs.think != nil {
		_ = a.answer(rs.think, calls, "", true) // what the split held back
	}
	n := 0
	if calls != nil {
		ds, _ := calls.Finish()
		_ = a.deltas(ds)
		n = calls.Streamed()
	}
	if a.index == 0 && !a.open {
		// No block at all: an empty text block, as a whole response has.
		_ = a.start(map[string]any{"type": "text", "text": ""})
	}
	_ = a.stop()
	reason, seq := rs.anthropicStop(res.Turn, n)
	_ = a.send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": reason, "stop_sequence": seq},
		"usage": map[string]int{"output_tokens": res.Turn.Generated}, "realizar": realizarOf(res, rs.pol)})
	return a.send("message_stop", map[string]any{})
}
