package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/realizar-host/realizar-host/internal/chatsandbox"
	"github.com/realizar-host/realizar-host/internal/jinja"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// maxBodyBytes bounds a JSON request body: 8 MiB.
const maxBodyBytes = 8 << 20

// Per-request caps, each a 400 naming its field: what one request may make
// the server build, before any of it is built.
const (
	// maxProcessors is the most realizar.processors per request: each is
	// an instance (its memory, a call per step), and llama.cpp's default
	// chain has fewer than ten stages.
	maxProcessors = 16
	// maxStopStrings and maxStopBytes bound stop: OpenAI's 4 strings, each
	// at most 1 KiB.
	maxStopStrings = 4
	maxStopBytes   = 1 << 10
	// maxLogitBias is the most logit_bias entries (each a token id).
	maxLogitBias = 1024
	// promptBytesPerPosition bounds a prompt's bytes before tokenization
	// by the context length: no tokenizer of ours makes a token of fewer
	// than one byte, and real text averages 3-5 bytes per token, so 16
	// refuses only prompts that cannot fit, without tokenizing them.
	promptBytesPerPosition = 16
)

// prepared is a validated generation request.
type prepared struct {
	fields *samplingFields
	// The prompt: tokens, a text to tokenize, or messages to render with
	// the chat template and tokenize; text and messages are turned into
	// tokens after admission (generate).
	prompt      []int32
	promptText  *string
	messages    []tokenizer.Message
	maxTokens   int
	logprobs    bool
	topLogprobs int
	tools       *chatTools // chat with tools; nil: none
	// stopSequences are a Messages request's stop_sequences (its
	// stop_sequence is the one that ended the turn).
	stopSequences []string
	// think splits the turn's reasoning from its answer (chat, Messages,
	// Responses: splitsReasoning).
	think bool
	// responses is a Responses request's own (nil for the others).
	responses *responsesTurn
	// templateVars are the chat template's further variables
	// (chat_template_kwargs; Messages' thinking as enable_thinking).
	templateVars map[string]json.RawMessage
	// spec is the turn's draft source (speculative decoding).
	spec speculation
}

// checkCommon validates the fields shared by both endpoints.
func (s *Server) checkCommon(f *samplingFields) (maxTokens int, err error) {
	if f.Model != "" && f.Model != s.model.ID {
		return 0, notFound("model_not_found", "model %q does not exist; this server serves %q", f.Model, s.model.ID)
	}
	if f.N != nil && *f.N != 1 {
		return 0, unsupported("n")
	}
	for _, x := range []struct {
		name string
		raw  json.RawMessage
	}{{"functions", f.Functions}, {"function_call", f.FunctionCall}} {
		if present(x.raw) {
			return 0, unsupported(x.name)
		}
	}
	if _, err := responseFormat(f.ResponseFormat, f.formatName()); err != nil {
		return 0, err
	}
	if _, err := grammarSpecOf(f); err != nil {
		return 0, err
	}
	if err := s.checkSpeculative(f); err != nil {
		return 0, err
	}
	if len(f.Stop) > maxStopStrings {
		return 0, badRequest("stop", "stop holds %d strings; at most %d", len(f.Stop), maxStopStrings)
	}
	for i, st := range f.Stop {
		if len(st) > maxStopBytes {
			return 0, badRequest("stop", "stop[%d] is %d bytes; at most %d", i, len(st), maxStopBytes)
		}
	}
	if len(f.LogitBias) > maxLogitBias {
		return 0, badRequest("logit_bias", "logit_bias holds %d entries; at most %d", len(f.LogitBias), maxLogitBias)
	}
	if f.Realizar != nil && len(f.Realizar.Processors) > maxProcessors {
		return 0, badRequest("realizar.processors", "realizar.processors holds %d processors; at most %d", len(f.Realizar.Processors), maxProcessors)
	}
	switch {
	case f.MaxTokens != nil && f.MaxCompletionTokens != nil && *f.MaxTokens != *f.MaxCompletionTokens:
		return 0, badRequest("max_tokens", "max_tokens and max_completion_tokens disagree")
	case f.MaxCompletionTokens != nil:
		maxTokens = *f.MaxCompletionTokens
	case f.MaxTokens != nil:
		maxTokens = *f.MaxTokens
	}
	if (f.MaxTokens != nil || f.MaxCompletionTokens != nil) && maxTokens < 1 {
		return 0, badRequest("max_tokens", "max_tokens must be >= 1, not %d", maxTokens)
	}
	return maxTokens, nil
}

// responseFormat reads response_format: absent, null or {"type": "text"}
// is plain text; {"type": "json_object"} asks for JSON mode (the output is
// a JSON object); {"type": "json_schema", "json_schema": {"schema": S}}
// asks for output valid against S (structured outputs), handled by
// grammarSpecOf. Any other type is a 400 naming the parameter by name (the
// request's own, samplingFields.formatName).
func responseFormat(raw json.RawMessage, name string) (jsonObject bool, err error) {
	if !present(raw) {
		return false, nil
	}
	var rf struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &rf) != nil {
		return false, badRequest(name, `%s must be {"type": "text"}, {"type": "json_object"} or {"type": "json_schema", ...}`, name)
	}
	switch rf.Type {
	case "text", "json_schema":
		return false, nil
	case "json_object":
		return true, nil
	}
	return false, badRequest(name, "%s type %q is not text, json_object or json_schema", name, rf.Type)
}

// present reports whether a raw field was given and is not null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && strings.TrimSpace(string(raw)) != "null"
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	return s.generate(w, r, t, shapeCompletion, s.decodeCompletion)
}

// decodeCompletion decodes and validates a completion request's body.
func (s *Server) decodeCompletion(body []byte) (prepared, error) {
	var req completionRequest
	if err := decodeBody(body, &req); err != nil {
		return prepared{}, err
	}
	maxTokens, err := s.checkCommon(&req.samplingFields)
	if err != nil {
		return prepared{}, err
	}
	switch {
	case req.Echo:
		return prepared{}, unsupported("echo")
	case req.Suffix != nil && *req.Suffix != "":
		return prepared{}, unsupported("suffix")
	case req.BestOf != nil && *req.BestOf > 1:
		return prepared{}, unsupported("best_of")
	case present(req.Tools):
		return prepared{}, chatOnly("tools")
	case present(req.ToolChoice):
		return prepared{}, chatOnly("tool_choice")
	case req.Prompt.count != 1:
		return prepared{}, badRequest("prompt", "one prompt per request (got %d)", req.Prompt.count)
	}
	p := prepared{fields: &req.samplingFields, maxTokens: maxTokens}
	if req.Logprobs != nil {
		if *req.Logprobs < 0 || *req.Logprobs > 20 {
			return prepared{}, badRequest("logprobs", "logprobs must be in [0, 20], not %d", *req.Logprobs)
		}
		p.logprobs, p.topLogprobs = true, *req.Logprobs
	}
	if req.Prompt.isText {
		if err := s.checkPromptBytes("prompt", len(req.Prompt.text)); err != nil {
			return prepared{}, err
		}
		p.promptText = &req.Prompt.text
	} else {
		p.prompt = req.Prompt.tokens
	}
	return p, nil
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	return s.generate(w, r, t, shapeChat, s.decodeChat)
}

// decodeChat decodes and validates a chat request's body.
func (s *Server) decodeChat(body []byte) (prepared, error) {
	var req chatRequest
	if err := decodeBody(body, &req); err != nil {
		return prepared{}, err
	}
	return s.prepareChat(&req)
}

// prepareChat validates a chat request (decoded, or translated from
// another API's request: Messages, Responses).
func (s *Server) prepareChat(req *chatRequest) (prepared, error) {
	maxTokens, err := s.checkCommon(&req.samplingFields)
	if err != nil {
		return prepared{}, err
	}
	if len(req.Messages) == 0 {
		return prepared{}, badRequest("messages", "messages is empty")
	}
	if req.ReasoningFormat != "" && !slices.Contains(reasoningFormats, req.ReasoningFormat) {
		return prepared{}, badRequest("reasoning_format", "reasoning_format %q is not one of %s", req.ReasoningFormat, strings.Join(reasoningFormats, ", "))
	}
	template := s.model.Tokenizer.ChatTemplate()
	msgs, err := chatMessages(req.Messages, polyfills(template), func(total int) error { return s.checkPromptBytes("messages", total) })
	if err != nil {
		return prepared{}, err
	}
	tools, err := readTools(req, template)
	if err != nil {
		return prepared{}, err
	}
	vars, err := templateKwargs(req.ChatTemplateKwargs)
	if err != nil {
		return prepared{}, err
	}
	if vars, err = withReasoningEffort(vars, req.ReasoningEffort, "reasoning_effort"); err != nil {
		return prepared{}, err
	}
	p := prepared{fields: &req.samplingFields, maxTokens: maxTokens, messages: tools.withToolPrompt(msgs, template), tools: tools,
		think: splitsReasoning(req.ReasoningFormat, template), templateVars: vars}
	if req.TopLogprobs != nil {
		if *req.TopLogprobs < 0 || *req.TopLogprobs > 20 {
			return prepared{}, badRequest("top_logprobs", "top_logprobs must be in [0, 20], not %d", *req.TopLogprobs)
		}
		if !req.Logprobs {
			return prepared{}, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
		}
		p.topLogprobs = *req.TopLogprobs
	}
	p.logprobs = req.Logprobs
	return p, nil
}

// tokenizePrompt renders p's messages with the chat template and
// tokenizes p's prompt text, once the request is admitted: the work a
// request's text costs counts against its tenant's max_concurrent. A
// template past its limits (chatsandbox) is a 400 naming the template.
func (s *Server) tokenizePrompt(ctx context.Context, p *prepared) error {
	tok := s.model.Tokenizer
	if p.messages != nil {
		render := tokenizer.RenderJinja
		if s.model.RenderChat != nil {
			render = func(template string, msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error) {
				return s.model.RenderChat(ctx, template, msgs, opts)
			}
		}
		opts := tokenizer.ChatOptions{AddGenerationPrompt: true, Vars: p.templateVars}
		if p.tools.active() {
			opts.Tools = p.tools.raw
		}
		text, _, err := tok.ApplyChatWith(render, p.messages, opts)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return chatTemplateError(tok.ChatTemplate(), err)
		}
		if err := s.checkPromptBytes("messages", len(text)); err != nil {
			return err
		}
		p.promptText = &text
	}
	if p.promptText != nil {
		p.prompt = tok.Encode(*p.promptText, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
	}
	return nil
}

// chatTemplateError is the 400 for a chat template that failed on a
// request's messages: it names the template (by its digest, never a path)
// and gives the template's line and message, or the limit it ran past.
func chatTemplateError(template string, err error) *APIError {
	why := err.Error()
	var je *jinja.Error
	if errors.As(err, &je) && !errors.Is(err, tokenizer.ErrTemplateLimit) {
		why = je.Error()
	}
	return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "chat_template_failed",
		Message: fmt.Sprintf("the model's chat template (tokenizer.chat_template, %s) failed on these messages: %s", chatsandbox.TemplateName(template), why)}
}

// checkPromptBytes refuses a prompt of n bytes (param names its field)
// that cannot fit the context, before it is tokenized.
func (s *Server) checkPromptBytes(param string, n int) error {
	limit := promptBytesPerPosition * s.model.Forward.ContextLength()
	if n > limit {
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: "context_length_exceeded",
			Message: fmt.Sprintf("%s is %d bytes; a context of %d positions takes at most %d (%d per position) before tokenization",
				param, n, s.model.Forward.ContextLength(), limit, promptBytesPerPosition)}
	}
	return nil
}

// messageText is a message's content: a string, or the concatenation of an
// array of {"type": "text", "text": ...} parts.
func messageText(raw json.RawMessage) (string, error) {
	if !present(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content must be a string or an array of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part type %q is not supported (text only)", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// handleModels lists the one model.
func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request, _ *tenancy.Tenant) error {
	writeJSON(w, http.StatusOK, modelList{Object: "list",
		Data: []modelObject{{ID: s.model.ID, Object: "model", Created: s.created, OwnedBy: "realizar-host"}}})
	return nil
}

// handleTokenize is llama.cpp's POST /tokenize: {"content", "add_special"} → {"tokens"}.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request, _ *tenancy.Tenant) error {
	var req struct {
		Content      string `json:"content"`
		AddSpecial   bool   `json:"add_special"`
		ParseSpecial *bool  `json:"parse_special"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	parse := req.ParseSpecial == nil || *req.ParseSpecial
	ids := s.model.Tokenizer.Encode(req.Content, tokenizer.EncodeOptions{AddSpecial: req.AddSpecial, ParseSpecial: parse})
	if ids == nil {
		ids = []int32{}
	}
	writeJSON(w, http.StatusOK, map[string][]int32{"tokens": ids})
	return nil
}

// handleDetokenize is llama.cpp's POST /detokenize: {"tokens"} → {"content"},
// control tokens as their text, as llama-server's (generated text hides
// them: turnPieces).
func (s *Server) handleDetokenize(w http.ResponseWriter, r *http.Request, _ *tenancy.Tenant) error {
	var req struct {
		Tokens []int32 `json:"tokens"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	n := int32(s.model.Tokenizer.Size())
	for i, id := range req.Tokens {
		if id < 0 || id >= n {
			return badRequest("tokens", "tokens[%d] = %d is outside the vocabulary [0, %d)", i, id, n)
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"content": string(s.model.Tokenizer.Decode(req.Tokens))})
	return nil
}

// readAll reads at most limit bytes of r; more is a 413.
func readAll(w http.ResponseWriter, r *http.Request, limit int) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &APIError{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "plugin_too_large",
			Message: fmt.Sprintf("the module is over your limit of %d bytes", limit)}
	}
	return b, err
}
