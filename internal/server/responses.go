package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/server/toolcall"
	"github.com/realizar-host/realizar-host/internal/serving"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// OpenAI's Responses API (POST /v1/responses): the request's input items
// (and a stored previous response's conversation) are translated to a
// chat request (prepareChat) and run through the same pipeline; the
// response is a Response object or its event stream, and with store it
// is kept for its tenant (Server.responses; responsestore.go).

// responsesRequest is POST /v1/responses. The sampling fields it shares
// with chat (temperature, top_p, stream, parallel_tool_calls) and this
// server's extensions are chat's; tools and tool_choice shadow chat's
// with the Responses shapes.
type responsesRequest struct {
	samplingFields
	// Input is a string (one user message) or an array of items:
	// messages ({"role", "content"}: a string or input_text/output_text
	// parts), function_call and function_call_output.
	Input        json.RawMessage `json:"input"`
	Instructions *string         `json:"instructions"`
	// MaxOutputTokens is the turn's budget (max_tokens).
	MaxOutputTokens *int `json:"max_output_tokens"`
	// Tools are [{"type": "function", "name", "description",
	// "parameters", "strict"}].
	Tools json.RawMessage `json:"tools"`
	// ToolChoice is "auto", "none", "required" or {"type": "function",
	// "name"}.
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	// Text is {"format": {"type": "text" | "json_object" | "json_schema",
	// "name", "schema", "strict"}}.
	Text json.RawMessage `json:"text"`
	// Store keeps the response for GET and previous_response_id (default
	// true, as OpenAI's).
	Store              *bool           `json:"store"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Metadata           json.RawMessage `json:"metadata"`
	// Reasoning is {"effort", "summary"}: effort as chat's
	// reasoning_effort; summary is accepted and not read (the reasoning
	// item carries the whole reasoning text).
	Reasoning *struct {
		Effort  *string         `json:"effort"`
		Summary json.RawMessage `json:"summary"`
	} `json:"reasoning"`
	// Refused: present and meaningful means 400.
	Background   *bool           `json:"background"`
	Conversation json.RawMessage `json:"conversation"`
	// ChatTemplateKwargs is chat's llama-server extension, refused here
	// rather than ignored: the Responses API's switch is reasoning.
	ChatTemplateKwargs json.RawMessage `json:"chat_template_kwargs"`
}

// respItem is one item of a conversation, normalized: a message (Role,
// Text), a function_call (CallID, Name, Arguments) or a
// function_call_output (CallID, Output).
type respItem struct {
	Type      string `json:"type"`
	Role      string `json:"role,omitempty"`
	Text      string `json:"text,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Output    string `json:"output,omitempty"`
}

// responsesTurn is what a Responses request keeps in its prepared
// request for the responder: the response's echoed fields, and the
// conversation to store.
type responsesTurn struct {
	tenant   string
	req      *responsesRequest
	items    []respItem // the conversation so far: the previous response's, then this input
	store    bool
	jsonText bool // text.format is json_object or json_schema
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	var load responseLoad
	return s.generateLoading(w, r, t, shapeResponses,
		func(ctx context.Context, body []byte) (err error) {
			load, err = s.loadResponses(ctx, t, body)
			return err
		},
		func(body []byte) (prepared, error) { return s.decodeResponses(t, body, load) })
}

// decodeResponses decodes a Responses request, continues the previous
// response's conversation (loadResponses read it, its tenant's only), and
// validates it as the chat request it translates to.
func (s *Server) decodeResponses(t *tenancy.Tenant, body []byte, load responseLoad) (prepared, error) {
	var req responsesRequest
	if err := decodeBody(body, &req); err != nil {
		return prepared{}, err
	}
	switch {
	case req.MaxTokens != nil || req.MaxCompletionTokens != nil:
		return prepared{}, badRequest("max_tokens", "the Responses API's budget is max_output_tokens")
	case present(req.ResponseFormat):
		return prepared{}, badRequest("response_format", "the Responses API's output format is text.format")
	case req.Background != nil && *req.Background:
		return prepared{}, unsupported("background")
	case present(req.Conversation):
		return prepared{}, unsupported("conversation")
	case present(req.ChatTemplateKwargs):
		return prepared{}, badRequest("chat_template_kwargs", "chat_template_kwargs is chat completions' field; the Responses API sets the template's reasoning with reasoning: {\"effort\": ...}")
	}
	rt := &responsesTurn{tenant: t.Name, req: &req, store: req.Store == nil || *req.Store}
	if req.PreviousResponseID != nil && *req.PreviousResponseID != load.previousID {
		// loadResponses reads the same body: it cannot have missed the id
		return prepared{}, errors.New("server: previous_response_id was not loaded")
	}
	rt.items = append(rt.items, load.previous...)
	calls := map[string]bool{} // the call ids so far
	for _, it := range rt.items {
		if it.Type == "function_call" {
			calls[it.CallID] = true
		}
	}
	input, err := responsesInput(req.Input, calls)
	if err != nil {
		return prepared{}, err
	}
	if len(input) == 0 {
		return prepared{}, badRequest("input", "input is empty")
	}
	rt.items = append(rt.items, input...)

	chat := chatRequest{samplingFields: req.samplingFields, ParallelToolCalls: req.ParallelToolCalls}
	if req.Reasoning != nil {
		if _, err := withReasoningEffort(nil, req.Reasoning.Effort, "reasoning.effort"); err != nil {
			return prepared{}, err
		}
		chat.ReasoningEffort = req.Reasoning.Effort
	}
	chat.MaxTokens = req.MaxOutputTokens
	if req.Instructions != nil && *req.Instructions != "" {
		chat.Messages = append(chat.Messages, chatMessage{Role: "system", Content: jsonString(*req.Instructions)})
	}
	chat.Messages = append(chat.Messages, itemsToChat(rt.items)...)
	if chat.Tools, err = responsesTools(req.Tools); err != nil {
		return prepared{}, err
	}
	chat.toolFields = &toolcall.ResponsesFields
	if chat.ToolChoice, err = responsesToolChoice(req.ToolChoice); err != nil {
		return prepared{}, err
	}
	if chat.ResponseFormat, rt.jsonText, err = responsesFormat(req.Text); err != nil {
		return prepared{}, err
	}
	chat.formatParam = "text.format" // chat's errors about ResponseFormat name the field the client sent
	p, err := s.prepareChat(&chat)
	if err != nil {
		return p, err
	}
	p.responses = rt
	return p, nil
}

// responsesInput reads input: a string is one user message; an array
// holds message, function_call and function_call_output items
// (reasoning items are dropped, as a stateless history has them). A
// function_call_output's call_id must be one of calls (the previous
// response's) or of a function_call item before it.
func responsesInput(raw json.RawMessage, calls map[string]bool) ([]respItem, error) {
	if !present(raw) {
		return nil, badRequest("input", "input is required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []respItem{{Type: "message", Role: "user", Text: s}}, nil
	}
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    json.RawMessage `json:"output"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return nil, badRequest("input", "input must be a string or an array of items")
	}
	var out []respItem
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "message", "":
			role := it.Role
			if role == "developer" {
				role = "system"
			}
			if role != "user" && role != "system" && role != "assistant" {
				return nil, badRequest(param+".role", "role %q is not user, system, developer or assistant", it.Role)
			}
			text, err := responsesContent(it.Content, param+".content")
			if err != nil {
				return nil, err
			}
			out = append(out, respItem{Type: "message", Role: role, Text: text})
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, badRequest(param, "a function_call item needs call_id and name")
			}
			if !json.Valid([]byte(it.Arguments)) {
				return nil, badRequest(param+".arguments", "arguments must be a JSON text")
			}
			calls[it.CallID] = true
			out = append(out, respItem{Type: "function_call", CallID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "function_call_output":
			if !calls[it.CallID] {
				return nil, badRequest(param+".call_id", "call_id %q is not the call_id of an earlier function_call (of this input or the previous response)", it.CallID)
			}
			output, err := responsesContent(it.Output, param+".output")
			if err != nil {
				return nil, err
			}
			out = append(out, respItem{Type: "function_call_output", CallID: it.CallID, Output: output})
		case "reasoning":
		default:
			return nil, badRequest(param+".type", "item type %q is not supported (message, function_call, function_call_output)", it.Type)
		}
	}
	return out, nil
}

// responsesContent is a message's content as text: a string, or
// input_text / output_text parts.
func responsesContent(raw json.RawMessage, param string) (string, error) {
	if !present(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", badRequest(param, "%s must be a string or an array of input_text parts", param)
	}
	var b strings.Builder
	for j, pt := range parts {
		if pt.Type != "input_text" && pt.Type != "output_text" && pt.Type != "text" {
			return "", badRequest(fmt.Sprintf("%s[%d].type", param, j), "content part type %q is not supported (input_text, output_text)", pt.Type)
		}
		b.WriteString(pt.Text)
	}
	return b.String(), nil
}

// itemsToChat translates a conversation to chat messages: function_call
// items join the assistant message before them (or make one), each
// function_call_output is a tool message.
func itemsToChat(items []respItem) []chatMessage {
	var out []chatMessage
	var calls []toolCallOut
	flush := func() {
		if len(calls) == 0 {
			return
		}
		b, _ := json.Marshal(calls)
		if n := len(out); n > 0 && out[n-1].Role == "assistant" && !present(out[n-1].ToolCalls) {
			out[n-1].ToolCalls = b
		} else {
			out = append(out, chatMessage{Role: "assistant", Content: jsonString(""), ToolCalls: b})
		}
		calls = nil
	}
	for _, it := range items {
		switch it.Type {
		case "function_call":
			calls = append(calls, toolCallOut{ID: it.CallID, Type: "function", Function: toolFunctionOut{Name: it.Name, Arguments: it.Arguments}})
			continue
		case "function_call_output":
			flush()
			id := it.CallID
			out = append(out, chatMessage{Role: "tool", Content: jsonString(it.Output), ToolCallID: &id})
		default:
			flush()
			out = append(out, chatMessage{Role: it.Role, Content: jsonString(it.Text)})
		}
	}
	flush()
	return out
}

// responsesTools translates function tools to chat's.
func responsesTools(raw json.RawMessage) (json.RawMessage, error) {
	if !present(raw) {
		return nil, nil
	}
	var tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if json.Unmarshal(raw, &tools) != nil {
		return nil, badRequest("tools", `tools must be an array of {"type": "function", "name", "description", "parameters"}`)
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
		if t.Type != "function" {
			return nil, badRequest(fmt.Sprintf("tools[%d].type", i), "tool type %q is not supported (function only)", t.Type)
		}
		out[i] = tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
	}
	b, _ := json.Marshal(out)
	return b, nil
}

// responsesToolChoice translates tool_choice: the strings as chat's, a
// function {"type": "function", "name"} to chat's named function.
func responsesToolChoice(raw json.RawMessage) (json.RawMessage, error) {
	if !present(raw) || bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
		return raw, nil
	}
	var c struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Type != "function" {
		return nil, badRequest("tool_choice", `tool_choice is "auto", "none", "required" or {"type": "function", "name"}`)
	}
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": c.Name}})
	return b, nil
}

// responsesFormat translates text.format to chat's response_format.
func responsesFormat(raw json.RawMessage) (json.RawMessage, bool, error) {
	if !present(raw) {
		return nil, false, nil
	}
	var t struct {
		Format *struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"format"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return nil, false, badRequest("text", `text is {"format": {"type": "text" | "json_object" | "json_schema", ...}}`)
	}
	if t.Format == nil {
		return nil, false, nil
	}
	switch t.Format.Type {
	case "text":
		return nil, false, nil
	case "json_object":
		return json.RawMessage(`{"type":"json_object"}`), true, nil
	case "json_schema":
		if !present(t.Format.Schema) {
			return nil, false, badRequest("text.format.schema", "text.format json_schema needs its schema")
		}
		b, _ := json.Marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": t.Format.Name,
			"schema": t.Format.Schema, "strict": t.Format.Strict}})
		return b, true, nil
	}
	return nil, false, badRequest("text.format.type", "text.format type %q is not text, json_object or json_schema", t.Format.Type)
}

// responseObject is a Response.
type responseObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Error              json.RawMessage   `json:"error"`
	IncompleteDetails  *incompleteReason `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []respOutput      `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Store              bool              `json:"store"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              json.RawMessage   `json:"tools"`
	Usage              *respUsage        `json:"usage"`
	Metadata           json.RawMessage   `json:"metadata"`
	Realizar           *realizarResponse `json:"realizar,omitempty"`
}

type incompleteReason struct {
	Reason string `json:"reason"`
}

// respOutput is an output item: reasoning (Summary, Content), a
// message (Content) or a function_call.
type respOutput struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Status    string         `json:"status"`
	Role      string         `json:"role,omitempty"`
	Summary   *[]any         `json:"summary,omitempty"`
	Content   *[]respContent `json:"content,omitempty"`
	CallID    string         `json:"call_id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Arguments *string        `json:"arguments,omitempty"`
}

// respContent is an output_text part (Annotations empty) or a
// reasoning_text part (Annotations nil).
type respContent struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations *[]any `json:"annotations,omitempty"`
}

// outputText is an output_text part of text.
func outputText(text string) respContent {
	return respContent{Type: "output_text", Text: text, Annotations: &[]any{}}
}

// reasoningItem is a reasoning output item, its text as one
// reasoning_text part (none when streaming begins).
func reasoningItem(text *string) respOutput {
	o := respOutput{Type: "reasoning", ID: randomID("rs_"), Status: "completed", Summary: &[]any{}, Content: &[]respContent{}}
	if text != nil {
		*o.Content = append(*o.Content, respContent{Type: "reasoning_text", Text: *text})
	}
	return o
}

type respUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

// randomID is prefix and 24 random hex digits: ids of stored objects
// are not guessable.
func randomID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// responseShell is the Response for rs's request before its output: the
// echoed request fields, status in_progress.
func (rs *responder) responseShell() responseObject {
	rt := rs.p.responses
	req := rt.req
	text := req.Text
	if !present(text) {
		text = json.RawMessage(`{"format":{"type":"text"}}`)
	}
	choice := req.ToolChoice
	if !present(choice) {
		choice = jsonString("auto")
	}
	tools := req.Tools
	if !present(tools) {
		tools = json.RawMessage("[]")
	}
	meta := req.Metadata
	if !present(meta) {
		meta = json.RawMessage("{}")
	}
	return responseObject{ID: rs.id, Object: "response", CreatedAt: rs.created, Status: "in_progress", Error: json.RawMessage("null"),
		Instructions: req.Instructions, MaxOutputTokens: req.MaxOutputTokens, Model: rs.s.model.ID, Output: []respOutput{},
		ParallelToolCalls: req.ParallelToolCalls == nil || *req.ParallelToolCalls, PreviousResponseID: req.PreviousResponseID,
		Store: rt.store, Temperature: req.Temperature, TopP: req.TopP, Text: text, ToolChoice: choice, Tools: tools, Metadata: meta}
}

// finishResponse completes o from the turn: status, usage, the realizar
// extension; and stores it with the conversation when the request asked
// (storeResponse's errors).
func (rs *responder) finishResponse(o *responseObject, res serving.Result) error {
	t := res.Turn
	o.Status = itemStatus(t)
	if o.Status == "incomplete" {
		o.IncompleteDetails = &incompleteReason{Reason: "max_output_tokens"}
		// The text item the cut ended is incomplete too, as OpenAI's is.
		if n := len(o.Output); n > 0 && (o.Output[n-1].Type == "message" || o.Output[n-1].Type == "reasoning") {
			o.Output[n-1].Status = "incomplete"
		}
	}
	o.Usage = &respUsage{InputTokens: len(rs.p.prompt), InputTokensDetails: map[string]int{"cached_tokens": t.Reused},
		OutputTokens: t.Generated, OutputTokensDetails: map[string]int{"reasoning_tokens": 0}, TotalTokens: len(rs.p.prompt) + t.Generated}
	o.Realizar = realizarOf(res, rs.pol)
	rt := rs.p.responses
	if !rt.store {
		return nil
	}
	items := append([]respItem(nil), rt.items...)
	for _, out := range o.Output {
		switch out.Type {
		case "message":
			var b strings.Builder // the answer (a reasoning item is not part of the history)
			for _, c := range *out.Content {
				b.WriteString(c.Text)
			}
			items = append(items, respItem{Type: "message", Role: "assistant", Text: b.String()})
		case "function_call":
			items = append(items, respItem{Type: "function_call", CallID: out.CallID, Name: out.Name, Arguments: *out.Arguments})
		}
	}
	return rs.s.storeResponse(rs.ctx, rt.tenant, o, items)
}

// itemStatus is a Response's status after turn t, and that of the text
// item it ended in: "incomplete" when the budget or the context cut it,
// else "completed".
func itemStatus(t engine.Turn) string {
	if t.Stop == engine.StopMaxTokens || t.Stop == engine.StopContext {
		return "incomplete"
	}
	return "completed"
}

// responseOutputs are the output items of a turn's text: its reasoning
// (when split), a message with the text (when there is any, or no
// call), then each call.
func (rs *responder) responseOutputs(text string) []respOutput {
	var calls []toolcall.Call
	var out []respOutput
	reasoning, text := rs.split(text)
	if reasoning != "" {
		out = append(out, reasoningItem(&reasoning))
	}
	if rs.p.tools.active() {
		m := toolcall.Parse(rs.p.tools.family, text)
		text, calls = m.Content, m.Calls
	}
	if text != "" || len(calls) == 0 {
		out = append(out, respOutput{Type: "message", ID: randomID("msg_"), Status: "completed", Role: "assistant",
			Content: &[]respContent{outputText(text)}})
	}
	for _, c := range calls {
		out = append(out, respOutput{Type: "function_call", ID: randomID("fc_"), Status: "completed",
			CallID: newCallID(rs.p.tools.family), Name: c.Name, Arguments: ptr(c.Arguments)})
	}
	return out
}

// responsesWhole writes the turn's Response.
func (rs *responder) responsesWhole(turn *serving.Turn) error {
	res, err := rs.result(turn)
	rs.timingHeaders(res)
	if err != nil {
		return err
	}
	o := rs.responseShell()
	o.Output = rs.responseOutputs(string(res.Turn.Text))
	if err := rs.finishResponse(&o, res); err != nil {
		return err
	}
	_ = http.NewResponseController(rs.w).SetWriteDeadline(time.Now().Add(rs.s.cfg.WriteTimeout))
	writeJSON(rs.w, http.StatusOK, o)
	return nil
}

// handleGetResponse is GET /v1/responses/{id}: a stored response of the
// tenant's; any other id (another tenant's too) is a 404.
func (s *Server) handleGetResponse(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	st, err := s.storedResponse(r.Context(), t.Name, r.PathValue("id"))
	if err != nil {
		return responseStoreError(err, "", "so stored responses cannot be read now; retry shortly")
	}
	writeJSON(w, http.StatusOK, st.Response)
	return nil
}

// handleDeleteResponse is DELETE /v1/responses/{id}.
func (s *Server) handleDeleteResponse(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	id := r.PathValue("id")
	err := tenancy.ErrNoResponse // an id of another shape was never stored
	if responseIDPattern.MatchString(id) {
		err = s.responses.DeleteResponse(r.Context(), t.Name, id)
	}
	if err != nil {
		return responseStoreError(err, "", "so stored responses cannot be deleted now; retry shortly")
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "response", "deleted": true})
	return nil
}

// responsesEvents writes the Responses event stream: response.created
// and response.in_progress, per output item output_item.added, its
// deltas (a message's content_part.added, output_text.delta,
// output_text.done and content_part.done; a call's
// function_call_arguments.delta and .done) and output_item.done, then
// response.completed (or response.incomplete). Each event carries its
// sequence_number. o is the response as streamed so far.
type responsesEvents struct {
	st   *sse
	seq  int
	o    *responseObject
	open bool // the last item of o.Output is still streaming
}

func (a *responsesEvents) send(typ string, v map[string]any) error {
	v["type"], v["sequence_number"] = typ, a.seq
	a.seq++
	return a.st.event(typ, v)
}

// last is the open item and its index.
func (a *responsesEvents) last() (*respOutput, int) {
	i := len(a.o.Output) - 1
	return &a.o.Output[i], i
}

// add opens item (closing the open one).
func (a *responsesEvents) add(item respOutput) error {
	if err := a.close(); err != nil {
		return err
	}
	a.o.Output = append(a.o.Output, item)
	a.open = true
	it, i := a.last()
	if err := a.send("response.output_item.added", map[string]any{"output_index": i, "item": it}); err != nil {
		return err
	}
	switch it.Type {
	case "message":
		*it.Content = append(*it.Content, outputText(""))
	case "reasoning":
		*it.Content = append(*it.Content, respContent{Type: "reasoning_text"})
	default:
		return nil
	}
	return a.send("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0,
		"part": (*it.Content)[0]})
}

// close ends the open item, completed.
func (a *responsesEvents) close() error { return a.closeAs("completed") }

// closeAs ends the open item with status ("incomplete": the last item of
// a turn cut by its budget).
func (a *responsesEvents) closeAs(status string) error {
	if !a.open {
		return nil
	}
	a.open = false
	it, i := a.last()
	it.Status = status
	if it.Type == "function_call" {
		it.Status = "completed" // a call is parsed whole or not at all
	}
	if it.Type == "message" || it.Type == "reasoning" {
		part := (*it.Content)[0]
		done := map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "text": part.Text}
		name := "response.reasoning_text.done"
		if it.Type == "message" {
			name, done["logprobs"] = "response.output_text.done", []any{}
		}
		if err := a.send(name, done); err != nil {
			return err
		}
		if err := a.send("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0,
			"part": part}); err != nil {
			return err
		}
	} else if err := a.send("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i,
		"arguments": *it.Arguments}); err != nil {
		return err
	}
	return a.send("response.output_item.done", map[string]any{"output_index": i, "item": it})
}

// text streams content text, in a message item.
func (a *responsesEvents) text(s string) error {
	if s == "" {
		return nil
	}
	if it, _ := a.lastOrNil(); it == nil || !a.open || it.Type != "message" {
		if err := a.add(respOutput{Type: "message", ID: randomID("msg_"), Status: "in_progress", Role: "assistant",
			Content: &[]respContent{}}); err != nil {
			return err
		}
	}
	it, i := a.last()
	(*it.Content)[0].Text += s
	return a.send("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0,
		"delta": s, "logprobs": []any{}})
}

// reasoning streams reasoning text, in a reasoning item.
func (a *responsesEvents) reasoning(s string) error {
	if s == "" {
		return nil
	}
	if it, _ := a.lastOrNil(); it == nil || !a.open || it.Type != "reasoning" {
		item := reasoningItem(nil)
		item.Status = "in_progress"
		if err := a.add(item); err != nil {
			return err
		}
	}
	it, i := a.last()
	(*it.Content)[0].Text += s
	return a.send("response.reasoning_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "delta": s})
}

// answer streams a piece of the turn's text: its reasoning (when split)
// in a reasoning item, the rest as message text or, in a tool turn, calls.
func (a *responsesEvents) answer(think *thinkSplit, calls *toolcall.Stream, text string, final bool) error {
	if think != nil {
		var reasoning string
		reasoning, text = think.feed(text, final)
		if err := a.reasoning(reasoning); err != nil {
			return err
		}
	}
	if calls != nil {
		return a.deltas(calls.Feed(text))
	}
	return a.text(text)
}

func (a *responsesEvents) lastOrNil() (*respOutput, int) {
	if len(a.o.Output) == 0 {
		return nil, -1
	}
	return a.last()
}

// deltas streams a tool turn's deltas: content as message text, each
// call as a function_call item whose arguments arrive as deltas.
func (a *responsesEvents) deltas(ds []toolcall.Delta) error {
	for _, d := range ds {
		if d.Call == nil {
			if err := a.text(d.Content); err != nil {
				return err
			}
			continue
		}
		if d.Call.First {
			if err := a.add(respOutput{Type: "function_call", ID: randomID("fc_"), Status: "in_progress", CallID: d.Call.ID,
				Name: d.Call.Name, Arguments: ptr("")}); err != nil {
				return err
			}
		}
		if d.Call.Arguments != "" {
			it, i := a.last()
			*it.Arguments += d.Call.Arguments
			if err := a.send("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": i,
				"delta": d.Call.Arguments}); err != nil {
				return err
			}
		}
	}
	return nil
}

// responsesStream writes the turn as the Responses event stream. An
// error after the stream began is an error event.
func (rs *responder) responsesStream(turn *serving.Turn) error {
	o := rs.responseShell()
	a := &responsesEvents{st: newSSE(rs.w, rs.s.cfg.WriteTimeout), o: &o}
	var calls *toolcall.Stream
	if rs.p.tools.active() {
		fam := rs.p.tools.family
		calls = toolcall.NewStream(fam, func() string { return newCallID(fam) })
	}
	begin := func() error {
		if a.st.started {
			return nil
		}
		if err := a.send("response.created", map[string]any{"response": o}); err != nil {
			return err
		}
		return a.send("response.in_progress", map[string]any{"response": o})
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
		e := clientError(rs.ctx, err)
		_ = a.send("error", map[string]any{"code": e.Code, "message": e.Message, "param": e.Param})
		return errors.Join(errWritten, err)
	}
	_ = begin()
	if rs.think != nil {
		_ = a.answer(rs.think, calls, "", true) // what the split held back
	}
	if calls != nil {
		ds, _ := calls.Finish()
		_ = a.deltas(ds)
	}
	if !slices.ContainsFunc(o.Output, func(it respOutput) bool { return it.Type != "reasoning" }) {
		// No text at all: an empty message, as a whole response has.
		_ = a.add(respOutput{Type: "message", ID: randomID("msg_"), Status: "in_progress", Role: "assistant", Content: &[]respContent{}})
	}
	_ = a.closeAs(itemStatus(res.Turn))
	if err := rs.finishResponse(&o, res); err != nil {
		e := clientError(rs.ctx, err)
		_ = a.send("error", map[string]any{"code": e.Code, "message": e.Message, "param": e.Param})
		return errors.Join(errWritten, err)
	}
	name := "response.completed"
	if o.Status == "incomplete" {
		name = "response.incomplete"
	}
	return a.send(name, map[string]any{"response": o})
}
